"""Build ``ptc_plus/capabilities/vocab/o200k_base.tiktoken.gz`` from the npm package ``js-tiktoken`` (MIT).

Why from npm: the machines this project runs on reach PyPI, npm and Debian only, not the host that
``tiktoken`` downloads ``o200k_base.tiktoken`` from (ADR 0060). ``js-tiktoken`` ships the same ranks in
``dist/ranks/o200k_base.js`` in a compressed text form: one line per run of consecutive ranks,
``"! <first rank> <base64 token> <base64 token> ..."``.

The script rewrites them in tiktoken's own file format (``<base64 token> <rank>\\n`` in rank order) and
refuses to write anything unless the result's SHA-256 is the ``expected_hash`` that ``tiktoken_ext``
pins for the official ``o200k_base.tiktoken``: what we ship is byte for byte OpenAI's file, whatever
package carried it here. The file is gzip-compressed with a fixed mtime so rebuilding is reproducible.

Run (needs ``npm`` on PATH and network access to the npm registry):

    .venv/bin/python scripts/build_o200k_vocab.py [--tarball js-tiktoken-1.0.21.tgz]
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "ptc_plus" / "capabilities" / "vocab" / "o200k_base.tiktoken.gz"
NPM_SPEC = "js-tiktoken@1.0.21"
RANKS_MEMBER = "package/dist/ranks/o200k_base.js"
# tiktoken_ext.openai_public.o200k_base(): expected_hash of o200k_base.tiktoken (tiktoken 0.14.0).
EXPECTED_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
N_RANKS = 199_998


def npm_pack(spec: str, into: Path) -> Path:
    """Download the package tarball with npm's own client; returns its path."""
    out = subprocess.run(
        ["npm", "pack", spec, "--silent", "--pack-destination", str(into)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return into / out[-1]


def ranks_from_js(source: str) -> dict[bytes, int]:
    """Parse js-tiktoken's ``export default {..., "bpe_ranks": "..."}`` module."""
    start, end = source.index("{"), source.rindex("}") + 1
    table = json.loads(source[start:end])
    ranks: dict[bytes, int] = {}
    for line in table["bpe_ranks"].split("\n"):
        if not line:
            continue
        _, first, *tokens = line.split(" ")
        for offset, token in enumerate(tokens):
            ranks[base64.b64decode(token, validate=True)] = int(first) + offset
    return ranks


def tiktoken_text(ranks: dict[bytes, int]) -> bytes:
    """tiktoken's file format (``tiktoken.load.dump_tiktoken_bpe``), in rank order."""
    lines = (base64.b64encode(token) + b" " + str(rank).encode() + b"\n" for token, rank in ranks.items())
    return b"".join(sorted(lines, key=lambda line: int(line.rsplit(b" ", 1)[1])))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tarball", type=Path, help=f"an already downloaded `npm pack {NPM_SPEC}`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tarball = args.tarball or npm_pack(NPM_SPEC, Path(tmp))
        with tarfile.open(tarball) as archive:
            member = archive.extractfile(RANKS_MEMBER)
            assert member is not None, f"{RANKS_MEMBER} missing from {tarball}"
            source = member.read().decode("utf-8")
    ranks = ranks_from_js(source)
    if len(ranks) != N_RANKS or sorted(ranks.values()) != list(range(N_RANKS)):
        sys.exit(f"unexpected ranks: {len(ranks)} tokens, not the contiguous 0..{N_RANKS - 1}")
    text = tiktoken_text(ranks)
    digest = hashlib.sha256(text).hexdigest()
    if digest != EXPECTED_SHA256:
        sys.exit(f"sha256 {digest} is not the official o200k_base.tiktoken's {EXPECTED_SHA256}")
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as out:
        out.write(text)
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_bytes(buffer.getvalue())
    print(f"{TARGET.relative_to(ROOT)}: {len(ranks)} ranks, sha256 {digest} (official), {len(buffer.getvalue())} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
