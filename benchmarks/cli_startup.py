"""CPU time of short ``ptc-plus`` commands before and after deferring the MCP SDK's import (issue 32, ADR 0105).

Each round runs, in fresh processes and in alternation, every case from two source trees:

- ``before``: ``git archive`` of ``--baseline`` (default: ``git merge-base HEAD main``) unpacked into a
  temporary directory;
- ``after``: this checkout.

Both run with this interpreter and its site-packages (the same dependencies) under ``python -S``, the tree
first on ``PYTHONPATH`` (``-S``: no ``.pth`` file, so this checkout's editable install cannot shadow the
baseline; each runs in the workspace, not in a tree, since ``-c`` puts the current directory first); the
launcher checks that ``ptc_plus`` came from the tree it was given. The cases:
``ptc-plus --help``, ``ptc-plus gate --user u``, ``ptc-plus capabilities plan`` (a temporary workspace, the
demo tools) and ``import ptc_plus.plugin`` (what every host loading the plugin pays). Measured per process:
CPU seconds (user + system), the delta of ``resource.getrusage(RUSAGE_CHILDREN)`` around it, which a loaded
machine inflates far less than wall time. Bytecode is cached (one uncounted warm-up round first), as an
installed wheel has it. Medians over ``--rounds``; the ratio is before over after.

Run: ``.venv/bin/python benchmarks/cli_startup.py [--rounds 5] [--baseline COMMIT]`` →
benchmarks/results/cli_startup.json
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import resource
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "cli_startup.json"

LAUNCH = """
import sys
from pathlib import Path
root = Path(sys.argv[1])
if sys.argv[2] == "import":
    __import__(sys.argv[3])
    code = 0
else:
    from ptc_plus.cli import main
    code = main(sys.argv[2:])
import ptc_plus
assert Path(ptc_plus.__file__).resolve().is_relative_to(root), (ptc_plus.__file__, root)
sys.exit(code)
"""


def cpu_of(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """CPU seconds (user + system) of one process running ``argv`` to its end (it must exit 0)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[4:]} exited {done.returncode}: {done.stdout[-400:]!r} {done.stderr[-400:]!r}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def unpack(ref: str, into: Path) -> str:
    """``ref``'s tree (``git archive``) under ``into``; returns the commit."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", ref], capture_output=True, text=True, check=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return commit.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", help="the commit to compare with (default: where this branch left main)")
    options = parser.parse_args()
    if options.baseline is None:
        fork = subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True)
        options.baseline = fork.stdout.strip() or "main"
    with tempfile.TemporaryDirectory(prefix="ptc-cli-startup-") as scratch:
        base = Path(scratch) / "before"
        base.mkdir()
        baseline_commit = unpack(options.baseline, base)
        workspace = Path(scratch) / "workspace"
        workspace.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PTC_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached (out of both trees), as an installed wheel has it
        env |= {
            "PYTHONPYCACHEPREFIX": str(Path(scratch) / "pycache"),
            "PTC_PLUS_CACHE_DIR": str(Path(scratch) / "cache"),
            "XDG_CONFIG_HOME": str(Path(scratch) / "xdg"),
            "XDG_STATE_HOME": str(Path(scratch) / "state"),
            "PTC_LOCALE": "en",
        }
        cases: dict[str, list[str]] = {
            "--help": ["--help"],
            "gate --user u": ["gate", "--user", "u", "--workspace", str(workspace)],
            "capabilities plan": ["capabilities", "plan", "--workspace", str(workspace)],
            "import ptc_plus.plugin": ["import", "ptc_plus.plugin"],
        }
        trees = {"before": base, "after": ROOT}
        paths = sysconfig.get_paths()
        samples: dict[str, dict[str, list[float]]] = {case: {tree: [] for tree in trees} for case in cases}
        for round_ in range(options.rounds + 1):  # round 0 writes the bytecode and is not counted
            for case, args in cases.items():
                for tree, path in trees.items():
                    argv = [sys.executable, "-S", "-c", LAUNCH, str(path), *args]
                    search = os.pathsep.join([str(path), *dict.fromkeys((paths["purelib"], paths["platlib"]))])
                    cpu = cpu_of(argv, env | {"PYTHONPATH": search}, workspace)
                    if round_:
                        samples[case][tree].append(cpu)
    results = {}
    for case, found in samples.items():
        before, after = statistics.median(found["before"]), statistics.median(found["after"])
        results[case] = {
            "before_cpu_s": round(before, 3),
            "after_cpu_s": round(after, 3),
            "ratio_before_over_after": round(before / after, 2),
            "samples_cpu_s": {tree: [round(s, 3) for s in values] for tree, values in found.items()},
        }
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    document = {
        "version": 1,
        "what": "CPU seconds (user+sys, RUSAGE_CHILDREN delta) of one fresh process per command, median of rounds",
        "bytecode": "cached (PYTHONPYCACHEPREFIX in the scratch directory, one uncounted warm-up round)",
        "rounds": options.rounds,
        "baseline": {"ref": options.baseline, "commit": baseline_commit},
        "after": {"commit": head.stdout.strip(), "dirty": _dirty()},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load": os.getloadavg()},
        "cases": results,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    for case, result in results.items():
        print(
            f"{case:24} before {result['before_cpu_s']:6.2f} s  after {result['after_cpu_s']:6.2f} s  "
            f"ratio {result['ratio_before_over_after']:.2f}"
        )


def _dirty() -> bool:
    status = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "ptc_plus", "hookspecs"],
        capture_output=True,
        text=True,
        check=True,
    )
    return bool(status.stdout.strip())


if __name__ == "__main__":
    main()
