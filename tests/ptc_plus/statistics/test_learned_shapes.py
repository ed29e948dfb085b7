"""Learned output shapes (ADR 0102): derived from results, never a value; merged per contract revision in the
store under its rules (versioned, locked, crash-safe); rendered as a learned ``TypedDict``."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookspecs import ToolSpec
from ptc_plus.sdk import LEARNED_MARK, LearnedResult, learned_functions, render_tool
from ptc_plus.statistics import Evidence, FamilySample, workspace_store
from ptc_plus.statistics.shapes import MAX_DEPTH, MAX_PROPERTIES, check, derive, field_name, merge, merge_all

ROOT = Path(__file__).resolve().parents[3]
REV = "sha256:bbbbbbbbbbbbbbbb"
SECRET = "sk-PLANTED-7f3a9c"


def sample(family: str, shape: dict[str, Any] | None, results: int = 1, revision: str = REV) -> FamilySample:
    return FamilySample(
        family_id=family,
        workspace="/w",
        plan_config_revision="c",
        evidence=(
            Evidence(
                identity="mcp:s/lookup", revision=revision, disclosure="full", used=True, shape=shape, results=results
            ),
        ),
    )


# -- the shape of a value ---------------------------------------------------------------------------------------


def test_a_record_keeps_types_and_field_names_and_which_keys_every_result_had() -> None:
    first = derive({"timezone": "Europe/Paris", "offset": 1, "dst": False, "note": None})
    second = derive({"timezone": "UTC", "offset": 0.5, "dst": True})
    merged = merge(first, second)
    assert merged == {
        "type": "object",
        "properties": {
            "dst": {"type": "boolean"},
            "note": {"type": "null"},
            "offset": {"type": "number"},
            "timezone": {"type": "string"},
        },
        "required": ["dst", "offset", "timezone"],
    }
    assert merge(merged, merged) == merged and merge(second, first) == merged  # idempotent, commutative


def test_a_contradicting_result_widens_to_a_union_and_is_never_refused() -> None:
    learned = derive({"items": [{"id": 1}]})
    widened = merge(learned, derive({"items": "none"}))
    assert widened["properties"]["items"] == {
        "anyOf": [{"type": "string"}, {"type": "array", "items": derive({"id": 1})}]
    }
    assert merge(widened, derive(None)) == {"anyOf": [{"type": "null"}, widened]}  # nullable
    check(widened)


def test_keys_that_look_like_data_make_a_mapping() -> None:
    for key in ("2026-12-01", "12345", "user@example.com", "/etc/passwd", "a b", "9f86d081884c7d65", "x.txt", "東京"):
        assert not field_name(key), key
        assert derive({key: 1, "name": "x"}) == {
            "type": "object",
            "additionalProperties": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        }
    for key in ("standard_rate", "Content-Type", "isDst", "@type", "v2"):
        assert field_name(key), key
    many = {f"field_{chr(97 + i // 26)}{chr(97 + i % 26)}": i for i in range(MAX_PROPERTIES + 1)}
    assert derive(many) == {"type": "object", "additionalProperties": {"type": "integer"}}
    # keys seen over many results count together: past the bound the record becomes a mapping
    halves = [
        derive({k: 1 for k in list(many)[: MAX_PROPERTIES // 2 + 1]}),
        derive({k: 1 for k in list(many)[MAX_PROPERTIES // 2 :]}),
    ]
    assert "additionalProperties" in merge_all(halves)  # type: ignore[operator]


def test_depth_and_size_are_bounded() -> None:
    deep: Any = 1
    for _ in range(40):
        deep = {"next": deep}
    text = orjson.dumps(derive(deep)).decode()
    assert text.count('"properties"') == MAX_DEPTH  # below that: unknown ({})
    wide = [{f"k{chr(97 + i)}{chr(97 + j)}": {"a": [1, {"b": "x"}]} for j in range(20)} for i in range(20)]
    check(derive({"rows": wide}))


def test_json_text_is_learned_as_json_text() -> None:
    shape = derive('{"timezone": "UTC", "is_dst": false}')
    assert shape["contentMediaType"] == "application/json"
    assert shape["contentSchema"]["required"] == ["is_dst", "timezone"]
    assert derive("plain text, not JSON") == {"type": "string"}
    assert merge(shape, derive("plain")) == {"type": "string"}  # sometimes not JSON: not known to be JSON


# -- no value ever reaches the store or the SDK text -------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20).map(lambda t: f"{t}{SECRET}{t}"),
)
_keys = st.one_of(st.sampled_from(["name", "id", "items", "rate", "meta", "tz"]), st.text(max_size=12))
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(_keys, inner, max_size=6)),
    max_leaves=40,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(results=st.lists(_values, min_size=1, max_size=4), as_text=st.booleans())
def test_planted_secrets_never_reach_the_store_or_the_sdk_text(
    tmp_path_factory: Any, results: list[Any], as_text: bool
) -> None:
    workspace = tmp_path_factory.mktemp("w")
    shapes = [derive(orjson.dumps(r).decode() if as_text else r) for r in results]
    learned = merge_all(shapes)
    assert learned is not None
    check(learned)
    store = workspace_store(workspace)
    store.record(sample("f1", learned, results=len(results)))
    found = store.read().learned("mcp:s/lookup", REV)
    assert found is not None and found.results == len(results)
    spec = ToolSpec(name="lookup", description="Look up.", source="mcp:s", input_schema={"type": "object"})
    stub = render_tool(spec, learned=LearnedResult(schema=found.shape, results=found.results, since=found.since))
    text = stub.stub + "".join(t.text for t in stub.types)
    for haystack in (store.path.read_text(encoding="utf-8"), text):
        assert SECRET not in haystack and "PLANTED" not in haystack
    for value in results:
        if isinstance(value, str) and len(value) > len(SECRET):
            assert value not in text


# -- the store: per contract revision, merged, never refused ---------------------------------------------------


def test_the_store_merges_shapes_over_families_and_a_new_revision_starts_over(tmp_path: Path) -> None:
    store = workspace_store(tmp_path)
    store.record(sample("f1", derive({"rate": 20, "country": "FR"}), results=3))
    store.record(sample("f2", derive({"rate": 7.5, "country": "DE", "reduced": [5.5]}), results=2))
    view = store.read()
    found = view.learned("mcp:s/lookup", REV)
    assert found is not None and found.results == 5
    assert found.shape == merge(
        derive({"rate": 20, "country": "FR"}), derive({"rate": 7.5, "country": "DE", "reduced": [5.5]})
    )
    assert view.learned("mcp:s/lookup", "sha256:cccccccccccccccc") is None
    store.record(sample("f3", derive({"other": True}), revision="sha256:cccccccccccccccc"))
    assert store.read().learned("mcp:s/lookup", "sha256:cccccccccccccccc").shape == derive({"other": True})  # type: ignore[union-attr]
    assert store.read().learned("mcp:s/lookup", REV) == found  # the old revision's is its own
    before = store.path.read_bytes()
    store.record(sample("f2", derive({"rate": 7.5, "country": "DE", "reduced": [5.5]}), results=2))
    assert store.path.read_bytes() == before  # a replay changes nothing
    assert b'"version":2' in before


def test_a_version_1_store_migrates_and_learns(tmp_path: Path) -> None:
    store = workspace_store(tmp_path)
    store.record(sample("f1", None))
    data = orjson.loads(store.path.read_bytes())
    data["version"] = 1
    for capability in data["capabilities"]:
        for revision in capability["revisions"]:
            del revision["learned"]
    store.path.write_bytes(orjson.dumps(data))
    assert store.read().status == "ok" and store.read().from_version == 1
    store.record(sample("f2", derive({"a": 1})))
    assert store.read().learned("mcp:s/lookup", REV).results == 1  # type: ignore[union-attr]
    assert (tmp_path / ".ptc-plus" / "statistics.json.v1.bak").exists()


def test_a_shape_holding_a_value_is_a_corrupt_store(tmp_path: Path) -> None:
    store = workspace_store(tmp_path)
    store.record(sample("f1", derive({"a": 1})))
    data = orjson.loads(store.path.read_bytes())
    data["capabilities"][0]["revisions"][0]["learned"]["shape"] = {"type": "string", "const": SECRET}
    store.path.write_bytes(orjson.dumps(data))
    assert store.read().status == "corrupt"


STUCK_IN_FSYNC = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from ptc_plus.statistics import Evidence, FamilySample, workspace_store
    from ptc_plus.statistics.shapes import derive

    real_fsync = os.fsync
    def fsync(fd):
        real_fsync(fd)
        print("in-fsync", flush=True)  # the new store is in its temporary file, not yet renamed; the lock is held
        time.sleep(600)
    os.fsync = fsync
    workspace_store(Path(sys.argv[1])).record(FamilySample(
        family_id="killed", workspace=sys.argv[1], plan_config_revision="c",
        evidence=[Evidence(identity="mcp:s/lookup", revision="{rev}", disclosure="full", used=True,
                           shape=derive({{"killed_key": 1}}), results=1)]))
    """
).format(rev=REV)


def test_learned_shapes_survive_a_sigkill_during_a_store_write(tmp_path: Path) -> None:
    store = workspace_store(tmp_path)
    store.record(sample("before", derive({"kept": "x"}), results=4))
    before = store.path.read_bytes()
    child = subprocess.Popen(
        [sys.executable, "-c", STUCK_IN_FSYNC, str(tmp_path)], stdout=subprocess.PIPE, cwd=ROOT, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "in-fsync\n"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    child.stdout.close()
    assert store.path.read_bytes() == before  # nothing half-written
    found = store.read().learned("mcp:s/lookup", REV)
    assert found is not None and found.results == 4 and found.shape == derive({"kept": "x"})  # nothing lost
    store.record(sample("after", derive({"later": 1}), results=1))
    found = store.read().learned("mcp:s/lookup", REV)
    assert found is not None and found.results == 5
    assert found.shape == merge(derive({"kept": "x"}), derive({"later": 1}))


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from ptc_plus.statistics import Evidence, FamilySample, workspace_store
    from ptc_plus.statistics.shapes import derive

    workspace, worker = Path(sys.argv[1]), int(sys.argv[2])
    store = workspace_store(workspace)
    sys.stdin.readline()  # start together
    for n in range(5):
        value = {{"common": n, f"only_w{{'abcdefgh'[worker]}}": [True], "varies": "x" if n % 2 else None}}
        store.record(FamilySample(family_id=f"w{{worker}}-f{{n}}", workspace=str(workspace), plan_config_revision="c",
            evidence=[Evidence(identity="mcp:s/lookup", revision="{rev}", disclosure="full", used=True,
                               shape=derive(value), results=2)]))
    """
).format(rev=REV)


def test_eight_concurrent_processes_learning_one_tool_end_with_one_merged_shape(tmp_path: Path) -> None:
    children = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(worker)], stdin=subprocess.PIPE, cwd=ROOT)
        for worker in range(8)
    ]
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"go\n")
        child.stdin.close()
    for child in children:
        assert child.wait(timeout=600) == 0
    expected = merge_all(
        derive({"common": n, f"only_w{'abcdefgh'[w]}": [True], "varies": "x" if n % 2 else None})
        for w in range(8)
        for n in range(5)
    )
    view = workspace_store(tmp_path).read()
    found = view.learned("mcp:s/lookup", REV)
    assert found is not None
    assert found.results == 8 * 5 * 2
    assert found.shape == expected
    assert found.shape["required"] == ["common", "varies"]  # type: ignore[index]
    assert view.all_learned() == (found,)


# -- the SDK renders it, marked as learned -------------------------------------------------------------------


def test_the_sdk_renders_a_learned_typeddict_marked_as_learned() -> None:
    spec = ToolSpec(name="get_rate", description="A country's VAT.", source="mcp:tax", input_schema={"type": "object"})
    assert "-> Any" in render_tool(spec).stub
    shape = merge(derive({"standard_rate": 20, "country": "FR"}), derive({"standard_rate": 19.0, "country": "DE"}))
    rendered = render_tool(spec, learned=LearnedResult(schema=shape, results=7, since="2026-12-01"))
    assert "-> GetRateResult:" in rendered.stub
    assert f"{LEARNED_MARK} (7 results since 2026-12-01" in rendered.stub
    (decl,) = rendered.types
    assert "class GetRateResult(TypedDict" in decl.text and "standard_rate: float" in decl.text
    text = render_tool(spec, learned=LearnedResult(schema=derive('{"tz": "UTC"}'), results=1, since="2026-12-01"))
    assert "-> str:" in text.stub and "json.loads(result) is GetRateResult" in text.stub
    published = ToolSpec(name="x", description="", source="mcp:s", output_schema={"type": "object"})
    assert render_tool(published, learned=LearnedResult(schema=shape, results=1, since="2026-12-01")).learned is None


def test_a_reader_of_the_contract_text_finds_which_results_have_a_learned_shape() -> None:
    learned = render_tool(
        ToolSpec(name="get_rate", description="VAT.", source="mcp:tax", input_schema={"type": "object"}),
        learned=LearnedResult(schema=derive({"rate": 1}), results=3, since="2026-12-01"),
    )
    plain = render_tool(
        ToolSpec(name="other", description=f"Mentions {LEARNED_MARK} in prose.", source="mcp:tax", input_schema={})
    )
    text = "\n\n".join([plain.stub, learned.stub])
    assert learned_functions(text) == {"get_rate"}
