"""The ``o200k_base`` encoding built from the vocabulary shipped in this package (ADR 0060).

``tiktoken.get_encoding("o200k_base")`` downloads its vocabulary on first use, which fails on machines
that reach only package registries. So the ranks ship inside the package
(``vocab/o200k_base.tiktoken.gz``: OpenAI's ``o200k_base.tiktoken``, byte for byte, gzip-compressed;
built by ``scripts/build_o200k_vocab.py``) and :func:`o200k_encoding` hands them to
``tiktoken.Encoding`` directly. Nothing is downloaded and nothing is written to a cache directory.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

VOCAB_RESOURCE = "vocab/o200k_base.tiktoken.gz"
"""The shipped ranks, relative to the ``ptc_plus.capabilities`` package."""

VOCAB_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""SHA-256 of the uncompressed file: the ``expected_hash`` tiktoken pins for the official ``o200k_base``."""

# Copied from tiktoken_ext.openai_public.o200k_base (tiktoken 0.14.0), which only hands them out together
# with a download; tests/ptc_plus/capabilities/test_o200k.py checks both against that function.
PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
SPECIAL_TOKENS = {"<|endoftext|>": 199_999, "<|endofprompt|>": 200_018}


def load_ranks() -> dict[bytes, int]:
    """The shipped mergeable ranks (token bytes → rank).

    :raises ValueError: the shipped file is not the official ``o200k_base`` (damaged or replaced).
    """
    packed = resources.files("ptc_plus.capabilities").joinpath(VOCAB_RESOURCE).read_bytes()
    data = gzip.decompress(packed)
    digest = hashlib.sha256(data).hexdigest()
    if digest != VOCAB_SHA256:
        raise ValueError(f"{VOCAB_RESOURCE} has sha256 {digest}, not o200k_base's {VOCAB_SHA256}")
    return {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines())}


def o200k_encoding() -> tiktoken.Encoding:
    """``o200k_base`` as tiktoken would build it after its download, from the shipped ranks.

    :raises ImportError: ``tiktoken`` is not installed.
    :raises ValueError: see :func:`load_ranks`.
    """
    import tiktoken

    return tiktoken.Encoding("o200k_base", pat_str=PAT_STR, mergeable_ranks=load_ranks(), special_tokens=SPECIAL_TOKENS)
