"""``ptc-plus exec`` of a trivial program without tools: the deferred token counter against an eager one (ADR 0101).

Each round runs, in fresh processes and in alternation:

- ``baseline``: ``python -I -c pass`` (the interpreter alone);
- ``deferred``: ``ptc-plus exec --json`` of ``return 1`` with no tools in an empty workspace, as shipped;
- ``eager``: the same command after building the offline counter first (``offline_counter().count``), which is
  what planning the session paid on every start before ADR 0101.

Both exec variants go through the same launcher (``python -c`` calling ``ptc_plus.cli.main``), so they differ
only in the counter. Measured per process: CPU seconds (user + system, the process and the children it reaped:
the sandbox), which a loaded machine does not inflate the way it does wall time; wall seconds too. Medians
over ``--rounds``; the ratios are eager over deferred and each over the baseline.

Run: ``.venv/bin/python benchmarks/exec_startup.py [--rounds 7]`` → benchmarks/results/exec_startup.json
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

RESULTS = Path(__file__).resolve().parent / "results" / "exec_startup.json"

LAUNCH = """
import sys
if sys.argv[1] == "eager":
    from ptc_plus.capabilities import offline_counter
    offline_counter().count("x")
from ptc_plus.cli import main
sys.exit(main(sys.argv[2:]))
"""


def measure(argv: list[str], stdin: bytes) -> tuple[float, float]:
    """CPU seconds (with reaped children) and wall seconds of one process running ``argv``."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.stdin.write(stdin)
    process.stdin.close()
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{argv[:4]} exited {process.returncode}: {out!r} {err!r}")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    samples: dict[str, list[tuple[float, float]]] = {"baseline": [], "deferred": [], "eager": []}
    with tempfile.TemporaryDirectory(prefix="ptc-exec-startup-") as scratch:
        workspace = Path(scratch) / "workspace"
        workspace.mkdir()
        env_cache = Path(scratch) / "cache"
        os.environ["PTC_PLUS_CACHE_DIR"] = str(env_cache)
        os.environ["XDG_CONFIG_HOME"] = str(Path(scratch) / "xdg")
        command = ["exec", "-", "--json", "--workspace", str(workspace)]
        for _ in range(rounds):
            samples["baseline"].append(measure([sys.executable, "-I", "-c", "pass"], b""))
            for variant in ("deferred", "eager"):
                argv = [sys.executable, "-c", LAUNCH, variant, *command]
                samples[variant].append(measure(argv, b"return 1\n"))
    median = {
        name: {
            "cpu_s": round(statistics.median(cpu for cpu, _ in found), 4),
            "wall_s": round(statistics.median(wall for _, wall in found), 4),
        }
        for name, found in samples.items()
    }
    result = {
        "version": 1,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "rounds": rounds,
        "median": median,
        "cpu_ratio_eager_over_deferred": round(median["eager"]["cpu_s"] / median["deferred"]["cpu_s"], 3),
        "cpu_saved_s": round(median["eager"]["cpu_s"] - median["deferred"]["cpu_s"], 4),
        "cpu_ratio_deferred_over_baseline": round(median["deferred"]["cpu_s"] / median["baseline"]["cpu_s"], 2),
        "cpu_ratio_eager_over_baseline": round(median["eager"]["cpu_s"] / median["baseline"]["cpu_s"], 2),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
