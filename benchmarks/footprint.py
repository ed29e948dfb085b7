"""Install footprint: site-packages size of a fresh install of PTC Plus, per tokenizer option (ADR 0060).

For each option a copy of the project is made in a temp dir (``before``: the last commit, ``git archive
HEAD``; the others: the working tree with the tokenizer dependency line and the shipped vocabulary set
as the option needs), its wheel is built with hatchling, and the wheel is installed with pip into a new
venv (``python -m venv``, so pip resolves the dependencies from the package index as a user's install
would). Recorded per option: the whole site-packages (MB), the same less the venv's own pip and
setuptools, the size of every installed distribution (its RECORD), and whether the offline counter
reproduces the pinned golden counts (tests/data/golden/o200k_counts.json) in that install.

Options:

- ``before``: the last commit, tokenizer ``bpe-openai`` (ADR 0020);
- ``a_bpe_openai``: today's tree, but ``bpe-openai`` instead of ``tiktoken``, the counter code of the last
  commit and no shipped vocabulary;
- ``b_tiktoken_shipped_vocab``: today's tree (``tiktoken`` + ``ptc_plus/capabilities/vocab``);
- ``c_extra_not_installed``: no tokenizer dependency and no vocabulary: what an optional extra leaves
  a user who does not ask for it (costs estimated). With the extra installed it is ``a`` or ``b`` again.

Run: ``.venv/bin/python benchmarks/footprint.py [--only NAME ...]`` → benchmarks/results/footprint.json
"""

from __future__ import annotations

import argparse
import io
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "footprint.json"
TOKENIZER_LINE = '    "tiktoken>=0.14",\n'
VOCAB_DIR = Path("ptc_plus") / "capabilities" / "vocab"
BOOTSTRAP = {"pip", "setuptools"}
MB = 1024 * 1024

# Runs inside each fresh venv: sizes per distribution, and the pinned golden counts check.
PROBE = r"""
import importlib.metadata as md, json, sys, sysconfig
from pathlib import Path
site = Path(sysconfig.get_paths()["purelib"])
dists = {}
for dist in md.distributions():
    size = 0
    for f in dist.files or ():
        p = Path(dist.locate_file(f))
        if p.is_file():
            size += p.stat().st_size
    dists[dist.metadata["Name"]] = {"version": dist.version, "bytes": size,
                                   "requires": [r for r in (dist.requires or []) if "extra ==" not in r]}
total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file() and not p.is_symlink())
golden = Path(sys.argv[1])
pinned = json.loads((golden / "o200k_counts.json").read_text())["counts"]
from hookspecs.types import SkillSpec
from ptc_plus.capabilities import ResourceEntry, ResourceSource, build_catalog, offline_counter
from ptc_plus.discovery.snapshot import build_snapshot
from ptc_plus.sdk.tools_file import load_tool_specs
tools = [s for p in sorted((golden.parent / "mcp").glob("*.json")) for s in load_tool_specs(p)]
catalog = build_catalog(
    tools=tools,
    skills=[SkillSpec(name="pdf", description="Fill in PDF forms and extract their text.")],
    resources=[ResourceSource(server="sqlite", entries=(ResourceEntry(
        name="Business Insights Memo", uri="memo://insights", description="Insights"),))],
)
snapshot = build_snapshot(catalog)
counter = offline_counter()
measured = {f"contract:{k}": v for k, v in snapshot.costs.items()}
measured["sdk:golden"] = counter.count((golden / "mcp_corpus_sdk.py.txt").read_text("utf-8"))
same = sum(1 for k, v in measured.items() if pinned.get(k) == v)
print(json.dumps({"site_packages_bytes": total, "distributions": dists, "unit": counter.unit,
                  "golden_compared": len(measured), "golden_identical": same}))
"""


def working_tree(into: Path) -> None:
    """The tracked and untracked-but-not-ignored files of the working tree, as they are now."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)


def last_commit(into: Path) -> None:
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def set_tokenizer(tree: Path, line: str | None, *, vocabulary: bool) -> None:
    pyproject = tree / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    assert text.count(TOKENIZER_LINE) == 1, "the tokenizer dependency line moved; update TOKENIZER_LINE"
    pyproject.write_text(text.replace(TOKENIZER_LINE, line or ""), encoding="utf-8")
    if not vocabulary:
        shutil.rmtree(tree / VOCAB_DIR)


def keep_bpe_openai(tree: Path) -> None:
    """Option (a): bpe-openai as the dependency and the counter code of ADR 0020 (the last commit's)."""
    set_tokenizer(tree, '    "bpe-openai>=0.1.4",\n', vocabulary=False)
    cost = "ptc_plus/capabilities/cost.py"
    old = subprocess.run(["git", "show", f"HEAD:{cost}"], cwd=ROOT, capture_output=True, check=True).stdout
    (tree / cost).write_bytes(old)
    (tree / "ptc_plus" / "capabilities" / "o200k.py").unlink()


OPTIONS: dict[str, tuple[Callable[[Path], None], Callable[[Path], None]]] = {
    "before": (last_commit, lambda tree: None),
    "a_bpe_openai": (working_tree, keep_bpe_openai),
    "b_tiktoken_shipped_vocab": (working_tree, lambda tree: None),
    "c_extra_not_installed": (working_tree, lambda tree: set_tokenizer(tree, None, vocabulary=False)),
}


def build_wheel(tree: Path, into: Path) -> Path:
    from hatchling.builders.wheel import WheelBuilder

    (wheel,) = WheelBuilder(str(tree)).build(directory=str(into), versions=["standard"])
    return Path(wheel)


def measure(name: str, tmp: Path) -> dict[str, object]:
    copy, adjust = OPTIONS[name]
    tree = tmp / name / "src"
    tree.mkdir(parents=True)
    copy(tree)
    adjust(tree)
    wheel = build_wheel(tree, tmp / name / "dist")
    venv = tmp / name / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    started = time.perf_counter()
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        check=True,
        capture_output=True,
    )
    install_s = time.perf_counter() - started
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-W", "ignore", "-c", PROBE, str(ROOT / "tests" / "data" / "golden")],
        cwd=tmp,
        capture_output=True,
        check=True,
        text=True,
    )
    found = orjson.loads(probe.stdout)
    dists: dict[str, dict[str, object]] = found["distributions"]
    bootstrap = sum(int(d["bytes"]) for n, d in dists.items() if n.lower() in BOOTSTRAP)  # type: ignore[call-overload]
    return {
        "wheel_kb": round(wheel.stat().st_size / 1024, 1),
        "install_s": round(install_s, 1),
        "site_packages_mb": round(found["site_packages_bytes"] / MB, 2),
        "site_packages_less_pip_setuptools_mb": round((found["site_packages_bytes"] - bootstrap) / MB, 2),
        "distributions_mb": {
            n: round(int(d["bytes"]) / MB, 2)  # type: ignore[call-overload]
            for n, d in sorted(dists.items(), key=lambda item: -int(item[1]["bytes"]))  # type: ignore[call-overload]
        },
        "versions": {n: d["version"] for n, d in sorted(dists.items())},
        "counter_unit": found["unit"],
        "golden_counts_compared": found["golden_compared"],
        "golden_counts_identical": found["golden_identical"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", choices=sorted(OPTIONS), help="measure only these options")
    args = parser.parse_args()
    names = args.only or list(OPTIONS)
    report: dict[str, object] = {
        "version": 1,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "method": "fresh venv per option, pip install of the option's wheel; sizes are file bytes on disk",
        "options": {},
    }
    with tempfile.TemporaryDirectory(prefix="ptc-footprint-") as tmp:
        for name in names:
            report["options"][name] = measure(name, Path(tmp))  # type: ignore[index]
            print(name, orjson.dumps(report["options"][name]).decode(), flush=True)  # type: ignore[index]
    options: dict[str, dict[str, object]] = report["options"]  # type: ignore[assignment]
    # Differences: against the last commit, and against no tokenizer at all (what the tokenizer costs).
    for key, reference in (("vs_before_mb", "before"), ("tokenizer_mb", "c_extra_not_installed")):
        if reference in options:
            base = float(options[reference]["site_packages_less_pip_setuptools_mb"])  # type: ignore[arg-type]
            for name, result in options.items():
                if key == "tokenizer_mb" and name == "before":
                    continue  # another tree (fewer other dependencies): the difference would not be the tokenizer's
                mine = float(result["site_packages_less_pip_setuptools_mb"])  # type: ignore[arg-type]
                result[key] = round(mine - base, 2)
    RESULTS.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
