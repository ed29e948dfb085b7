"""Start-up of the CLI, of its short commands and of a host loading the plugin, as CPU time and as ratios to
``python -I -c pass`` (issue 32; ADR 0105, 0115, 0123). One script for what ``cli_startup.py`` (ADR 0105)
and this one measured apart before.

Each round runs, in fresh processes and in alternation, every case from two source trees, with the
floor ``python -I -c pass`` measured in the same round:

- ``before``: ``git archive`` of ``--baseline`` (default: ``git merge-base HEAD main``) unpacked into a
  temporary directory;
- ``after``: this checkout.

Both run with this interpreter and its site-packages (the same dependencies), the tree first on
``PYTHONPATH`` (ahead of the editable install's path; the launcher checks that ``ptc_plus`` came from the
tree it was given), in a scratch workspace. The cases:

- ``ptc-plus --version`` and ``ptc-plus --help`` (what the console script runs: ``ptc_plus.cli.main``);
- ``ptc-plus gate --user u`` and ``ptc-plus capabilities plan`` (the scratch workspace, the demo tools);
- ``import ptc_plus.plugin`` (what every host loading the plugin pays at import);
- ``host alone``: the reference host built with entry points loaded and the plugin blocked
  (``AGENT_HOST_DISABLE_PLUGINS=ptc_plus``), no MCP server configured;
- ``host + plugin``: the same host loading the plugin from its entry point.

Measured per process: CPU seconds (user + system, the delta of ``RUSAGE_CHILDREN`` around it, which a
loaded machine inflates far less than wall time). Bytecode is cached (one uncounted warm-up round). Medians
over ``--rounds``; every ratio is of medians of the same run. Targets (issue 32): ``--version`` and
``--help`` at most 5x the floor; ``host + plugin`` at most 3x ``host alone``.

Run: ``.venv/bin/python benchmarks/startup.py [--rounds 7] [--baseline COMMIT]`` → benchmarks/results/startup.json
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
import tarfile
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "startup.json"

# No pathlib here: the launcher's own imports are counted too, so it imports nothing the command would not.
LAUNCH = """
import sys
root = sys.argv[1]
if sys.argv[2] == "host":
    from pathlib import Path
    from hookspecs.reference import ReferenceHost
    ReferenceHost(workspace=Path.cwd(), state_dir=Path(sys.argv[3]))
    code = 0
elif sys.argv[2] == "import":
    __import__(sys.argv[3])
    code = 0
else:
    from ptc_plus.cli import main
    code = main(sys.argv[2:])
for package in ("ptc_plus", "hookspecs"):  # whichever the case imported came from the tree it was given
    found = sys.modules.get(package)
    assert found is None or found.__file__.startswith(root + "/"), (found, root)
sys.exit(code)
"""

TARGETS = {"ptc-plus --version": 5.0, "ptc-plus --help": 5.0}
"""Most allowed ratio to ``python -I -c pass``."""
PLUGIN_TARGET = 3.0
"""Most allowed ratio of ``host + plugin`` to ``host alone``."""


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


def dirty() -> bool:
    """Whether this checkout's ``ptc_plus`` or ``hookspecs`` differ from its commit (the figures' tree)."""
    status = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "ptc_plus", "hookspecs"],
        capture_output=True,
        text=True,
        check=True,
    )
    return bool(status.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--baseline", help="the commit to compare with (default: where this branch left main)")
    options = parser.parse_args()
    if options.baseline is None:
        fork = subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True)
        options.baseline = fork.stdout.strip() or "main"
    with tempfile.TemporaryDirectory(prefix="ptc-startup-") as scratch:
        base = Path(scratch) / "before"
        base.mkdir()
        baseline_commit = unpack(options.baseline, base)
        workspace = Path(scratch) / "workspace"
        workspace.mkdir()
        state = str(Path(scratch) / "host-state")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PTC_", "AGENT_HOST_", "PYTHON"))}
        env |= {
            "PYTHONPYCACHEPREFIX": str(Path(scratch) / "pycache"),
            "PTC_PLUS_CACHE_DIR": str(Path(scratch) / "cache"),
            "XDG_CONFIG_HOME": str(Path(scratch) / "xdg"),
            "XDG_STATE_HOME": str(Path(scratch) / "state"),
            "PTC_LOCALE": "en",
        }
        cases: dict[str, tuple[list[str], dict[str, str]]] = {
            "ptc-plus --version": (["--version"], {}),
            "ptc-plus --help": (["--help"], {}),
            "ptc-plus gate --user u": (["gate", "--user", "u", "--workspace", str(workspace)], {}),
            "ptc-plus capabilities plan": (["capabilities", "plan", "--workspace", str(workspace)], {}),
            "import ptc_plus.plugin": (["import", "ptc_plus.plugin"], {}),
            "host alone": (["host", state], {"AGENT_HOST_DISABLE_PLUGINS": "ptc_plus"}),
            "host + plugin": (["host", state], {}),
        }
        trees = {"before": base, "after": ROOT}
        floor: list[float] = []
        samples: dict[str, dict[str, list[float]]] = {case: {tree: [] for tree in trees} for case in cases}
        for round_ in range(options.rounds + 1):  # round 0 writes the bytecode and is not counted
            cpu = cpu_of([sys.executable, "-I", "-c", "pass"], env, workspace)
            if round_:
                floor.append(cpu)
            for case, (args, extra) in cases.items():
                for tree, path in trees.items():
                    argv = [sys.executable, "-s", "-c", LAUNCH, str(path.resolve()), *args]
                    cpu = cpu_of(argv, env | extra | {"PYTHONPATH": str(path)}, workspace)
                    if round_:
                        samples[case][tree].append(cpu)
    pass_s = statistics.median(floor)
    medians = {case: {tree: statistics.median(found[tree]) for tree in trees} for case, found in samples.items()}
    results = {
        case: {
            "before_cpu_s": round(medians[case]["before"], 4),
            "after_cpu_s": round(medians[case]["after"], 4),
            "before_ratio_to_python_I_pass": round(medians[case]["before"] / pass_s, 2),
            "after_ratio_to_python_I_pass": round(medians[case]["after"] / pass_s, 2),
            "samples_cpu_s": {tree: [round(s, 4) for s in values] for tree, values in samples[case].items()},
        }
        for case in cases
    }
    plugin = {tree: medians["host + plugin"][tree] / medians["host alone"][tree] for tree in trees}
    targets = [
        {
            "target": f"{case} <= {bound}x python -I -c pass",
            "before": results[case]["before_ratio_to_python_I_pass"],
            "after": results[case]["after_ratio_to_python_I_pass"],
            "met": results[case]["after_ratio_to_python_I_pass"] <= bound,
        }
        for case, bound in TARGETS.items()
    ]
    targets.append(
        {
            "target": f"host + plugin <= {PLUGIN_TARGET}x host alone",
            "before": round(plugin["before"], 2),
            "after": round(plugin["after"], 2),
            "met": plugin["after"] <= PLUGIN_TARGET,
        }
    )
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    document = {
        "version": 1,
        "what": "CPU seconds (user+sys, RUSAGE_CHILDREN delta) of one fresh process per case, median of rounds",
        "bytecode": "cached (PYTHONPYCACHEPREFIX in the scratch directory, one uncounted warm-up round)",
        "rounds": options.rounds,
        "python_I_pass_cpu_s": round(pass_s, 4),
        "python_I_pass_samples_cpu_s": [round(s, 4) for s in floor],
        "baseline": {"ref": options.baseline, "commit": baseline_commit},
        "after": {"commit": head.stdout.strip(), "dirty": dirty()},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load": os.getloadavg()},
        "targets": targets,
        "cases": results,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    print(f"{'python -I -c pass':28} {pass_s * 1000:8.1f} ms")
    for case, result in results.items():
        print(
            f"{case:28} before {result['before_cpu_s'] * 1000:8.1f} ms "
            f"({result['before_ratio_to_python_I_pass']:5.1f}x)  after {result['after_cpu_s'] * 1000:8.1f} ms "
            f"({result['after_ratio_to_python_I_pass']:5.1f}x)"
        )
    for target in targets:
        print(f"{'met' if target['met'] else 'NOT met':8} {target['target']}: {target['before']} -> {target['after']}")


if __name__ == "__main__":
    main()
