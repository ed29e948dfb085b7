"""The SDK through a payload cache (ADR 0078): a hit gives the byte-identical SDK, damage is rendered again."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import orjson
import pytest

from hookspecs.types import ToolSpec
from ptc_plus.capabilities.disk_cache import DiskCache
from ptc_plus.sdk import Persisted, decode_tools, encode_tools, render_sdk, render_tool
from ptc_plus.sdk import module as sdk_module
from ptc_plus.sdk.tools_file import load_tool_specs

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def specs() -> list[ToolSpec]:
    return [spec for path in sorted((DATA / "mcp").glob("*.json")) for spec in load_tool_specs(path)]


class MemoryCache:
    """A :class:`~ptc_plus.sdk.PayloadCache` in a dict, counting loads and stores."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], bytes] = {}
        self.stores = 0

    def key(self, parts: Iterable[bytes]) -> str:
        return "k" + str(abs(hash(tuple(parts))))

    def load(self, kind: str, key: str) -> bytes | None:
        return self.entries.get((kind, key))

    def store(self, kind: str, key: str, payload: bytes) -> bool:
        self.stores += 1
        self.entries[kind, key] = payload
        return True


@pytest.fixture(autouse=True)
def _any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdk_module, "CACHE_ABOVE", 0)


def test_a_cache_hit_gives_the_byte_identical_sdk(specs: list[ToolSpec], tmp_path: Path) -> None:
    reference = render_sdk(specs)
    cache = DiskCache(directory=tmp_path)
    for header in (True, False):
        expected = render_sdk(specs, header=header)
        cold = render_sdk(specs, header=header, cache=cache)
        warm = render_sdk(specs, header=header, cache=cache)
        assert cold == warm == expected
        assert warm.text.encode() == expected.text.encode()
    assert render_sdk(specs, cache=cache) == reference
    assert len(list((tmp_path / "sdk").glob("*.bin"))) == 1
    assert len(list((tmp_path / "sdk-body").glob("*.bin"))) == 1


def test_a_hit_renders_nothing(specs: list[ToolSpec], monkeypatch: pytest.MonkeyPatch) -> None:
    cache = MemoryCache()
    expected = render_sdk(specs, cache=cache)

    def no_render(*args: object, **kwargs: object) -> object:
        raise AssertionError("rendered again although the cache holds it")

    monkeypatch.setattr(sdk_module, "render_tool", no_render)
    assert render_sdk(list(reversed(specs)), cache=cache) == expected  # any order: the output is sorted
    assert cache.stores == 1


def test_changed_specs_are_another_entry(specs: list[ToolSpec]) -> None:
    cache = MemoryCache()
    render_sdk(specs, cache=cache)
    edited = [ToolSpec(name=specs[0].name, description="Edited.", source=specs[0].source), *specs[1:]]
    assert render_sdk(edited, cache=cache) == render_sdk(edited)
    assert cache.stores == 2


def test_a_damaged_or_foreign_payload_is_rendered_again(specs: list[ToolSpec]) -> None:
    cache = MemoryCache()
    expected = render_sdk(specs, cache=cache)
    ((kind, key),) = cache.entries
    document = orjson.loads(cache.entries[kind, key])
    for foreign in (
        b"\x00 not json",
        orjson.dumps({**document, "version": 99}),
        orjson.dumps({**document, "tools": [["too", "short"]]}),
        orjson.dumps({**document, "text": 7}),
        orjson.dumps({**document, "tools": document["tools"][1:]}),  # a tool missing
        orjson.dumps([]),
    ):
        cache.entries[kind, key] = foreign
        assert render_sdk(specs, cache=cache) == expected
        assert cache.entries[kind, key] != foreign  # stored again


def test_the_tools_payload_round_trips_with_shared_values(specs: list[ToolSpec]) -> None:
    tools = [render_tool(s) for s in specs]
    texts = [t.stub for t in tools]
    decoded = decode_tools(encode_tools(tools, "text", texts))
    assert decoded == Persisted(tools=tuple(tools), text="text", texts=tuple(texts))
    assert decode_tools(encode_tools([])) == Persisted(tools=())
    assert decode_tools(encode_tools(tools, texts=texts[1:])) is None  # one text per tool or none
