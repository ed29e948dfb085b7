"""Tokenizer load time and speed: tiktoken + the shipped vocabulary vs ``bpe-openai`` (ADR 0060).

Baseline in the same run: ``bpe-openai`` 0.1.4's ``get_encoding("o200k_base")``, the tokenizer before
ADR 0060 (it must be installed next to ``tiktoken``). Measured:

- ``load_s``: in a fresh interpreter, import the tokenizer, build the encoding and count one short
  string (what the first ``offline_counter().count`` pays), median of ``--rounds`` processes run in
  alternation;
- ``count_sdk_ms``: counting the golden SDK text (tests/data/golden, ~9k tokens) once loaded, median;
- for the shipped file, size and decompression time of the compression choices (gzip as shipped,
  xz, none), in this process.

Run: ``.venv/bin/python benchmarks/tokenizer_load.py [--rounds 9]`` → benchmarks/results/tokenizer_load.json
"""

from __future__ import annotations

import argparse
import gzip
import lzma
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "tokenizer_load.json"
SDK = ROOT / "tests" / "data" / "golden" / "mcp_corpus_sdk.py.txt"
VOCAB = ROOT / "ptc_plus" / "capabilities" / "vocab" / "o200k_base.tiktoken.gz"

LOADERS = {
    "bpe_openai": (
        "import warnings; warnings.simplefilter('ignore', DeprecationWarning)\n"
        "import bpe_openai; enc = bpe_openai.get_encoding('o200k_base')"
    ),
    "tiktoken_shipped": "from ptc_plus.capabilities.o200k import o200k_encoding; enc = o200k_encoding()",
}

PROBE = """
import sys, time, statistics
t0 = time.perf_counter()
{load}
enc.encode_ordinary("hello world")
load = time.perf_counter() - t0
text = open(sys.argv[1], encoding="utf-8").read()
samples = []
for _ in range(20):
    t = time.perf_counter(); n = len(enc.encode_ordinary(text)); samples.append(time.perf_counter() - t)
print(load, statistics.median(samples) * 1000, n)
"""


def best_of(func: object, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        func()  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()

    samples: dict[str, dict[str, list[float]]] = {name: {"load_s": [], "count_sdk_ms": []} for name in LOADERS}
    tokens: dict[str, int] = {}
    for _ in range(args.rounds):
        for name, load in LOADERS.items():
            out = subprocess.run(
                [sys.executable, "-c", PROBE.format(load=load), str(SDK)],
                cwd=ROOT,
                capture_output=True,
                check=True,
                text=True,
            ).stdout.split()
            samples[name]["load_s"].append(float(out[0]))
            samples[name]["count_sdk_ms"].append(float(out[1]))
            tokens[name] = int(out[2])

    raw = gzip.decompress(VOCAB.read_bytes())
    xz = lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME)
    compression = {
        "gzip (shipped)": {
            "bytes": VOCAB.stat().st_size,
            "decompress_ms": best_of(lambda: gzip.decompress(VOCAB.read_bytes())) * 1000,
        },
        "xz": {"bytes": len(xz), "decompress_ms": best_of(lambda: lzma.decompress(xz)) * 1000},
        "none": {"bytes": len(raw), "decompress_ms": 0.0},
    }

    medians = {
        name: {metric: round(statistics.median(values), 4) for metric, values in metrics.items()}
        for name, metrics in samples.items()
    }
    base, new = medians["bpe_openai"], medians["tiktoken_shipped"]
    report = {
        "version": 1,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "rounds": args.rounds,
        "sdk_tokens": tokens,
        "median": medians,
        "load_ratio_tiktoken_over_bpe_openai": round(new["load_s"] / base["load_s"], 3),
        "count_ratio_tiktoken_over_bpe_openai": round(new["count_sdk_ms"] / base["count_sdk_ms"], 3),
        "vocab_compression": {k: {m: round(v, 2) for m, v in c.items()} for k, c in compression.items()},
    }
    RESULTS.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
