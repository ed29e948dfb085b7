"""Parity: ``o200k_base`` counts from tiktoken + the shipped vocabulary vs ``bpe-openai`` (ADR 0060).

Needs both ``bpe-openai`` (the tokenizer before ADR 0060) and ``tiktoken`` installed. Compares the token
ids (not only the counts) of every string of four corpora:

- ``golden``: every capability contract of the test corpus (tests/data/mcp, as the ``corpus_snapshot``
  fixture builds it), every contract of the benchmark catalog (English and Chinese synthetic services),
  the golden SDK text and the raw corpus files;
- ``repo``: every text file tracked by git, whole, by paragraph and by line;
- ``unicode``: seeded random mixes of scripts (CJK, emoji with ZWJ/skin tones/flags, combining marks,
  RTL, digits, contractions, odd whitespace), random code points of every plane including lone surrogates;
- ``random_bytes``: seeded random byte strings decoded as UTF-8 (``replace`` and ``surrogateescape``),
  Latin-1 and CP1252.

With ``--write-golden`` it also pins today's counts of the golden corpus in
``tests/data/golden/o200k_counts.json``; tests/ptc_plus/capabilities/test_o200k.py holds every later
counter to them.

Run: ``.venv/bin/python benchmarks/tokenizer_parity.py [--write-golden]`` → benchmarks/results/tokenizer_parity.json
"""

from __future__ import annotations

import argparse
import platform
import random
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalog_data import DATA, ROOT, benchmark_catalog_parts

from hookspecs.types import SkillSpec
from ptc_plus.capabilities import ResourceEntry, ResourceSource, build_catalog
from ptc_plus.capabilities.o200k import o200k_encoding
from ptc_plus.sdk import render_sdk
from ptc_plus.sdk.tools_file import load_tool_specs

RESULTS = Path(__file__).resolve().parent / "results" / "tokenizer_parity.json"
GOLDEN_COUNTS = DATA / "golden" / "o200k_counts.json"

SCRIPTS = [
    "获取当前时间并转换为另一个时区。数据库查询结果",  # Chinese
    "こんにちは世界、カタカナとひらがな",  # Japanese
    "안녕하세요 세계",  # Korean
    "Привет, мир! Ёлка",  # Cyrillic
    "مرحبا بالعالم",  # Arabic
    "שלום עולם",  # Hebrew
    "नमस्ते दुनिया",  # Devanagari
    "สวัสดีชาวโลก",  # Thai
    "Ελληνικά γράμματα",  # Greek
    "😀👍🏽👨‍👩‍👧‍👦🇨🇳🇺🇸🏳️‍🌈❤️‍🔥🧑🏿‍💻",  # emoji: skin tones, ZWJ, flags
    "e\u0301 a\u0308 n\u0303 Z\u0351\u0352\u0353",  # combining marks
    "I'm you'LL we'Ve they'RE it's DON'T",  # contractions, mixed case
    "0123456789 3.14159 1,000,000 ١٢٣ ½ ²",  # numbers
    "\t \n\r\n \u00a0\u2003\u3000\u200b \x0b\x0c",  # whitespace
    "def f(x):\n    return {'a': [1, 2]}  # comment\n",  # code
    "<|endoftext|> <|endofprompt|>",  # special tokens count as text (encode_ordinary)
    "https://example.com/path?q=1&r=2#frag /usr/local/bin//",
]


def corpus_golden() -> Iterator[tuple[str, str]]:
    # The catalog of the corpus_snapshot fixture (tests/ptc_plus/conftest.py).
    tools = [spec for path in sorted((DATA / "mcp").glob("*.json")) for spec in load_tool_specs(path)]
    skills = [SkillSpec(name="pdf", description="Fill in PDF forms and extract their text.")]
    memo = ResourceEntry(name="Business Insights Memo", uri="memo://insights", description="Insights")
    resources = [ResourceSource(server="sqlite", entries=(memo,))]
    for capability in build_catalog(tools=tools, skills=skills, resources=resources).capabilities:
        yield f"contract:{capability.identity}", capability.contract
    tools, skills, resources = benchmark_catalog_parts()
    for capability in build_catalog(tools=tools, skills=skills, resources=resources).capabilities:
        yield f"benchmark-contract:{capability.identity}", capability.contract
    yield "sdk:golden", (DATA / "golden" / "mcp_corpus_sdk.py.txt").read_text(encoding="utf-8")
    yield "sdk:corpus", render_sdk(tools).text
    for path in sorted((DATA / "mcp").glob("*.json")):
        yield f"file:{path.name}", path.read_text(encoding="utf-8")


def corpus_repo() -> Iterator[tuple[str, str]]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in sorted(filter(None, listed.decode().split("\0"))):
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        yield f"{name}", text
        for n, block in enumerate(text.split("\n\n")):
            yield f"{name}#p{n}", block
        for n, line in enumerate(text.splitlines(keepends=True)):
            yield f"{name}:{n + 1}", line


def random_code_point(rng: random.Random) -> str:
    plane = rng.random()
    if plane < 0.5:
        return chr(rng.randrange(0x20, 0x3000))
    if plane < 0.8:
        return chr(rng.randrange(0x3000, 0x10000))  # includes the surrogate range D800–DFFF
    return chr(rng.randrange(0x10000, 0x110000))


def corpus_unicode(rng: random.Random, count: int) -> Iterator[tuple[str, str]]:
    pieces = [*SCRIPTS, *(" " * n for n in range(1, 5)), "\n", "\r\n", "'s", "'T", "123", "4567"]
    for n, text in enumerate(SCRIPTS):
        yield f"script:{n}", text
    for n in range(count):
        mixed = "".join(rng.choice(pieces)[: rng.randrange(1, 40)] for _ in range(rng.randrange(1, 12)))
        yield f"mix:{n}", mixed
        noise = "".join(random_code_point(rng) for _ in range(rng.randrange(1, 60)))
        yield f"codepoints:{n}", noise
        yield f"spliced:{n}", mixed[: len(mixed) // 2] + noise + mixed[len(mixed) // 2 :]


def corpus_random_bytes(rng: random.Random, count: int) -> Iterator[tuple[str, str]]:
    for n in range(count):
        data = rng.randbytes(rng.randrange(1, 200))
        yield f"utf8-replace:{n}", data.decode("utf-8", "replace")
        yield f"utf8-surrogateescape:{n}", data.decode("utf-8", "surrogateescape")
        yield f"latin1:{n}", data.decode("latin-1")
        yield f"cp1252:{n}", data.decode("cp1252", "replace")


def bpe_openai_encoding() -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # bpe-openai 0.1.4's importlib.resources.open_binary
        import bpe_openai

        return bpe_openai.get_encoding("o200k_base")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--random", type=int, default=50_000, help="random strings per random corpus kind")
    parser.add_argument("--seed", type=int, default=60)
    parser.add_argument("--write-golden", action="store_true", help=f"pin bpe-openai's counts in {GOLDEN_COUNTS}")
    args = parser.parse_args()

    import bpe_openai
    import tiktoken

    before, after = bpe_openai_encoding(), o200k_encoding()
    rng = random.Random(args.seed)
    corpora = {
        "golden": corpus_golden(),
        "repo": corpus_repo(),
        "unicode": corpus_unicode(rng, args.random),
        "random_bytes": corpus_random_bytes(rng, args.random),
    }
    report: dict[str, object] = {
        "version": 1,
        "python": platform.python_version(),
        "bpe_openai": bpe_openai.__version__,
        "tiktoken": tiktoken.__version__,
        "seed": args.seed,
        "corpora": {},
    }
    golden_counts: dict[str, int] = {}
    mismatches: list[dict[str, object]] = []
    started = time.perf_counter()
    for kind, strings in corpora.items():
        compared = chars = tokens = 0
        for name, text in strings:
            old = before.encode_ordinary(text)  # type: ignore[attr-defined]
            new = after.encode_ordinary(text)
            compared += 1
            chars += len(text)
            tokens += len(old)
            if kind == "golden" and name.startswith(("contract:", "sdk:")):
                golden_counts[name] = len(old)
            if old != new:
                mismatches.append({"corpus": kind, "name": name, "text": text, "before": len(old), "after": len(new)})
        report["corpora"][kind] = {"strings": compared, "characters": chars, "tokens": tokens}  # type: ignore[index]
    corpora_report: dict[str, dict[str, int]] = report["corpora"]  # type: ignore[assignment]
    report["strings_compared"] = sum(c["strings"] for c in corpora_report.values())
    report["tokens_compared"] = sum(c["tokens"] for c in corpora_report.values())
    report["identical_ids"] = not mismatches
    report["mismatches"] = mismatches[:20]
    report["mismatch_count"] = len(mismatches)
    report["seconds"] = round(time.perf_counter() - started, 1)
    RESULTS.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    if args.write_golden:
        pinned = {"version": 1, "unit": "o200k_base tokens", "counted_by": f"bpe-openai {bpe_openai.__version__}"}
        GOLDEN_COUNTS.write_bytes(
            orjson.dumps({**pinned, "counts": golden_counts}, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        )
    print(orjson.dumps({k: v for k, v in report.items() if k != "mismatches"}, option=orjson.OPT_INDENT_2).decode())
    return 0 if not mismatches else 1


if __name__ == "__main__":
    raise SystemExit(main())
