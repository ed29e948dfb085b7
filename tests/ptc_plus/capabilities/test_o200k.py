"""The shipped ``o200k_base`` vocabulary (ADR 0060): today's counts, tiktoken's own definition, found when installed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from ptc_plus.capabilities import cost, o200k
from ptc_plus.discovery.snapshot import CatalogSnapshot
from tests.installed_wheel import unpack_wheel

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "data" / "golden"


def test_counts_on_the_golden_corpus_are_the_pinned_ones(corpus_snapshot: CatalogSnapshot) -> None:
    """Every contract and the whole SDK count exactly as bpe-openai counted them before ADR 0060."""
    pinned = orjson.loads((GOLDEN / "o200k_counts.json").read_bytes())
    assert pinned["unit"] == corpus_snapshot.counter.unit == "o200k_base tokens"
    measured = {f"contract:{identity}": tokens for identity, tokens in corpus_snapshot.costs.items()}
    measured["sdk:golden"] = cost.offline_counter().count((GOLDEN / "mcp_corpus_sdk.py.txt").read_text("utf-8"))
    assert {k: v for k, v in pinned["counts"].items() if k in measured} == measured
    assert set(measured) <= set(pinned["counts"])


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("hello world", [24912, 2375]),
        ("获取当前时间", None),
        ("lone \ud800 surrogate", None),  # counted as U+FFFD, as bpe-openai and tiktoken's encode both do
        ("<|endoftext|>", None),  # a special token's text is ordinary text in a contract
    ],
)
def test_ids_are_o200k_base_ids(text: str, ids: list[int] | None) -> None:
    encoding = o200k.o200k_encoding()
    if ids is not None:
        assert encoding.encode_ordinary(text) == ids
    assert encoding.decode(encoding.encode_ordinary(text)) == text.encode("utf-16", "surrogatepass").decode(
        "utf-16", "replace"
    )


def test_the_encoding_is_tiktokens_own_o200k_base(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pattern, special tokens and the vocabulary's hash are the ones tiktoken_ext would download and build."""
    import tiktoken_ext.openai_public as openai_public

    asked: dict[str, Any] = {}

    def no_download(path: str, expected_hash: str | None = None) -> dict[bytes, int]:
        asked.update(path=path, expected_hash=expected_hash)
        return o200k.load_ranks()

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", no_download)
    official = openai_public.o200k_base()
    ours = o200k.o200k_encoding()
    assert asked["path"].endswith("/o200k_base.tiktoken") and asked["expected_hash"] == o200k.VOCAB_SHA256
    assert (ours.name, ours._pat_str, ours._special_tokens) == (
        official["name"],
        official["pat_str"],
        official["special_tokens"],
    )
    assert len(official["mergeable_ranks"]) == 199_998 and ours.n_vocab == 200_019


@pytest.mark.usefixtures("fresh_offline_counter")
def test_a_vocabulary_that_is_not_o200k_base_is_refused(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(o200k, "VOCAB_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="not o200k_base's"):
        o200k.load_ranks()
    with caplog.at_level("WARNING", logger="ptc_plus.capabilities.cost"):
        assert isinstance(cost.offline_counter(), cost.EstimatedTokenCounter)


_PROBE = """
import json, ptc_plus
from ptc_plus.capabilities import cost, o200k
from importlib import resources
counter = cost.offline_counter()
print(json.dumps({
    "package": ptc_plus.__file__,
    "vocab": str(resources.files("ptc_plus.capabilities").joinpath(o200k.VOCAB_RESOURCE)),
    "counter": type(counter).__name__,
    "unit": counter.unit,
    "tokens": counter.count("获取当前时间 hello world"),
}))
"""


def test_an_installed_wheel_counts_from_the_vocabulary_inside_the_package(tmp_path: Path) -> None:
    wheel = unpack_wheel(tmp_path)
    assert {
        "ptc_plus/capabilities/vocab/o200k_base.tiktoken.gz",
        "ptc_plus/capabilities/vocab/LICENSE-o200k_base.txt",
    } <= wheel.names
    site = wheel.site
    found = wheel.probe(_PROBE)
    assert found["package"] == str(site / "ptc_plus" / "__init__.py")
    assert found["vocab"] == str(site / "ptc_plus" / "capabilities" / "vocab" / "o200k_base.tiktoken.gz")
    assert (found["counter"], found["unit"]) == ("BpeTokenCounter", "o200k_base tokens")
    assert found["tokens"] == cost.offline_counter().count("获取当前时间 hello world")
