"""Many processes recording into one statistics store (issue 26 item 3, ADR 0091): families lost and waits.

Run: .venv/bin/python benchmarks/statistics_contention.py [--quick]
Writes benchmarks/results/statistics_contention.json (``--quick``: a smaller run, printed only).

For 8 and 32 real writer processes started together, each records its share of
2,400 families (8 × 300, 32 × 75) of 300 capabilities each into one workspace
store, with the default lock bound hosts use (``LOCK_WAIT_S``, 10 s), and the
same run measures three stores:

- ``old``: the store as it was before ADR 0091 (commit ``BEFORE``, loaded from
  git: a non-blocking ``flock`` poll, giving up after the bound with PTC-5004);
- ``new``: this store (the lock, plus the intake a writer uses when the lock is
  busy, folded by the lock holder);
- ``sqlite-wal``: a prototype of the same data in SQLite (WAL, ``synchronous=FULL``,
  ``busy_timeout`` = the same bound): a table of families and one of samples,
  one ``BEGIN IMMEDIATE`` transaction per family, retention enforced per
  capability as the store does. Not a product store: the candidate ADR 0091
  measured against.

Per store and writer count: families lost (record() failed, or missing from the
store read afterwards: must be 0), the worst single ``record()`` wait, its
median and 99th percentile, and the wall time of the whole burst; ratios are
new / old and sqlite / old from the same run. The machine's load is recorded:
the old store's losses grow with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "statistics_contention.json"
BEFORE = "2e71ca1"
"""The last commit with the store ADR 0091 replaced."""
TOTAL_FAMILIES = 2_400
CAPABILITIES = 300
WRITERS = (8, 32)

WRITER = textwrap.dedent(
    """
    import sys, time, orjson
    from pathlib import Path
    kind, workspace, worker, families, capabilities = sys.argv[1], Path(sys.argv[2]), *map(int, sys.argv[3:6])
    if kind == "old":
        sys.path.insert(0, sys.argv[6])
        from old_statistics_store import workspace_store
    elif kind == "new":
        from ptc_plus.statistics import workspace_store
    else:
        sys.path.insert(0, sys.argv[6])
        from sqlite_statistics_store import workspace_store
    from ptc_plus.statistics import Evidence, FamilySample

    store = workspace_store(workspace)
    sys.stdin.readline()  # start together
    waits, failures = [], []
    for n in range(families):
        items = [Evidence(identity=f"mcp:s{c % 7}/tool_{c:04d}", revision=f"sha256:{c:016x}",
                          disclosure="full" if c % 3 else "on-demand", used=(n + c) % 5 == 0)
                 for c in range(capabilities)]
        sample = FamilySample(family_id=f"w{worker}-f{n}", workspace=str(workspace), plan_config_revision="c",
                              evidence=items)
        start = time.perf_counter()
        try:
            store.record(sample)
        except Exception as exc:
            failures.append(f"w{worker}-f{n}: {type(exc).__name__}: {exc}"[:300])
        waits.append(time.perf_counter() - start)
    print(orjson.dumps({"waits": waits, "failures": failures}).decode())
    """
)

SQLITE_STORE = textwrap.dedent(
    '''
    """A prototype SQLite store (WAL): what ADR 0091 measured as the alternative. Benchmark only."""
    import sqlite3
    from pathlib import Path

    from ptc_plus.statistics.codec import family_key
    from ptc_plus.statistics.store import DEFAULT_RETENTION, LOCK_WAIT_S

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS families(key TEXT PRIMARY KEY, sequence INTEGER NOT NULL UNIQUE,
                                        plan_config_revision TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS samples(identity TEXT NOT NULL, sequence INTEGER NOT NULL, revision TEXT NOT NULL,
                                       schema_revision TEXT NOT NULL, used INTEGER NOT NULL,
                                       on_demand INTEGER NOT NULL, PRIMARY KEY(identity, sequence)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS samples_by_sequence ON samples(sequence);
    """


    class SqliteStore:
        def __init__(self, path, retention=DEFAULT_RETENTION, busy_s=LOCK_WAIT_S):
            path.parent.mkdir(parents=True, exist_ok=True)
            self.path, self.busy_s, self.retention, self._db = path, busy_s, retention, None

        @property
        def db(self):
            # Opened at first use, inside record(): switching to WAL and creating the schema take the write
            # lock too, and may time out like any write ("database is locked"); the next record() retries.
            if self._db is None:
                db = sqlite3.connect(self.path, timeout=self.busy_s, isolation_level=None)
                try:
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=FULL")
                    db.executescript(SCHEMA)
                except BaseException:
                    db.close()
                    raise
                self._db = db
            return self._db

        def record(self, sample):
            db = self.db
            key = family_key(sample.family_id)
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT sequence FROM families WHERE key = ?", (key,)).fetchone()
                if row is None:
                    (top,) = db.execute("SELECT coalesce(max(sequence), 0) FROM families").fetchone()
                    sequence = top + 1
                    db.execute("INSERT INTO families VALUES (?, ?, ?)", (key, sequence, sample.plan_config_revision))
                else:
                    sequence = row[0]
                    db.execute("DELETE FROM samples WHERE sequence = ?", (sequence,))
                db.executemany(
                    "INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?)",
                    [(e.identity, sequence, e.revision, e.schema_revision, int(e.used),
                      int(e.disclosure == "on-demand")) for e in sample.evidence],
                )
                db.executemany(
                    "DELETE FROM samples WHERE identity = ?1 AND sequence <= (SELECT sequence FROM samples "
                    "WHERE identity = ?1 ORDER BY sequence DESC LIMIT 1 OFFSET ?2)",
                    [(e.identity, self.retention) for e in sample.evidence],
                )
                db.execute("DELETE FROM families WHERE sequence NOT IN (SELECT DISTINCT sequence FROM samples)")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

        def families(self):
            return {key for (key,) in self.db.execute("SELECT key FROM families")}


    def workspace_store(workspace):
        return SqliteStore(Path(workspace) / ".ptc-plus" / "statistics.sqlite3")
    '''
)


def old_store_module(directory: Path) -> Path:
    """The store of commit :data:`BEFORE`, importable as ``old_statistics_store`` from ``directory``."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{BEFORE}:ptc_plus/statistics/store.py"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    (directory / "old_statistics_store.py").write_text(source, "utf-8")
    (directory / "sqlite_statistics_store.py").write_text(SQLITE_STORE, "utf-8")
    return directory


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def burst(kind: str, workspace: Path, modules: Path, writers: int, families: int) -> dict[str, Any]:
    load = os.getloadavg()[0]
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER,
                kind,
                str(workspace),
                str(worker),
                str(families),
                str(CAPABILITIES),
                str(modules),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )
        for worker in range(writers)
    ]
    start = time.perf_counter()
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"go\n")
        child.stdin.close()
    reports = []
    for child in children:
        assert child.stdout is not None
        out = child.stdout.read()
        child.stdout.close()
        assert child.wait(timeout=3600) == 0, f"{kind} writer failed"
        reports.append(orjson.loads(out))
    wall = time.perf_counter() - start
    waits = [w for report in reports for w in report["waits"]]
    failures = [f for report in reports for f in report["failures"]]
    recorded = recorded_families(kind, workspace, modules)
    return {
        "writers": writers,
        "families": writers * families,
        "families_lost": writers * families - recorded,
        "record_failures": len(failures),
        "first_failure": failures[0] if failures else None,
        "worst_wait_seconds": round(max(waits), 4),
        "median_wait_seconds": round(percentile(waits, 0.5), 4),
        "p99_wait_seconds": round(percentile(waits, 0.99), 4),
        "wall_seconds": round(wall, 2),
        "load_average_1m_before": round(load, 2),
    }


def recorded_families(kind: str, workspace: Path, modules: Path) -> int:
    """How many distinct families the store numbered (its eligibility sequence): each family is recorded once,
    so the shortfall is what was lost (displaced families keep their numbers; retention drops only samples)."""
    if kind == "sqlite-wal":
        sys.path.insert(0, str(modules))
        from sqlite_statistics_store import workspace_store

        (top,) = workspace_store(workspace).db.execute("SELECT coalesce(max(sequence), 0) FROM families").fetchone()
        return int(top)
    from ptc_plus.statistics import workspace_store as current

    view = current(workspace).read()
    assert view.status == "ok", view.problem
    return view.families()


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    total = 240 if quick else TOTAL_FAMILIES
    result: dict[str, Any] = {
        "version": 1,
        "benchmark": "statistics_contention",
        "command": "python benchmarks/statistics_contention.py",
        "before_commit": BEFORE,
        "capabilities_per_family": CAPABILITIES,
        "lock_wait_seconds": 10.0,
        "machine": {"cpus": os.cpu_count(), "load_average_1m": round(os.getloadavg()[0], 2)},
        "runs": {},
    }
    with tempfile.TemporaryDirectory(prefix="ptc-stats-contention-") as scratch:
        modules = old_store_module(Path(scratch))
        for writers in WRITERS:
            runs = {}
            for kind in ("old", "new", "sqlite-wal"):
                workspace = Path(scratch) / f"{kind}-{writers}"
                workspace.mkdir()
                runs[kind] = burst(kind, workspace, modules, writers, total // writers)
                print(kind, writers, runs[kind], flush=True)
            old, new, sqlite = runs["old"], runs["new"], runs["sqlite-wal"]
            runs["ratios"] = {
                f"{name}_over_old_{metric}": round(other[metric] / old[metric], 3) if old[metric] else None
                for name, other in (("new", new), ("sqlite", sqlite))
                for metric in ("worst_wait_seconds", "p99_wait_seconds", "median_wait_seconds", "wall_seconds")
            }
            result["runs"][str(writers)] = runs
    text = orjson.dumps(result, option=orjson.OPT_INDENT_2).decode()
    print(text)
    if not quick:
        RESULTS.write_text(text + "\n", "utf-8")


if __name__ == "__main__":
    main()
