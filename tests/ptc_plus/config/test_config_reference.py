"""The starter file, the JSON Schema and docs/config.md: generated from the model, and up to date in the tree."""

from __future__ import annotations

import re
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import orjson
import pytest

from ptc_plus.config import load_config
from ptc_plus.config.keys import SERVER, config_keys
from ptc_plus.config.model import PtcConfig
from ptc_plus.config.paths import Scope
from ptc_plus.config.reference import REFERENCE_FILE, SCHEMA_IN_TREE, reference_text, schema_text
from ptc_plus.config.schema import SCHEMA_FILE, config_schema, schema_uri
from ptc_plus.config.starter import starter_text
from ptc_plus.config.tighten import TIGHTEN_ONLY_PATHS
from ptc_plus.gate.settings import ENV_VARS

ROOT = Path(__file__).resolve().parents[3]


def validator() -> jsonschema.Draft7Validator:
    schema = orjson.loads(SCHEMA_FILE.read_bytes())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def uncommented(text: str) -> str:
    """The starter with every commented-out key line switched on."""
    return re.sub(r'^# ((?:[A-Za-z_]+|"[^"]*") = .*)$', r"\1", text, flags=re.MULTILINE)


# -- checked in CI: the tree holds exactly what the generator writes ---------------------------------------------------


def test_docs_config_md_is_generated_from_the_model() -> None:
    assert (ROOT / REFERENCE_FILE).read_text(encoding="utf-8") == reference_text(), (
        "docs/config.md is stale: run `python -m ptc_plus.config.reference`"
    )


def test_the_packaged_schema_is_generated_from_the_model() -> None:
    assert (ROOT / SCHEMA_IN_TREE).read_text(encoding="utf-8") == schema_text(), (
        "ptc_plus/config/config.schema.json is stale: run `python -m ptc_plus.config.reference`"
    )


def test_the_reference_names_every_key_with_its_default() -> None:
    text = reference_text()
    for key in config_keys():
        assert f"| `{key.path}` |" in text
    assert (
        '| `runtime.policy` | string | `"workspace-write"` | `read-only`, `workspace-write`, `danger-full-access`'
        in text
    )
    assert "**tighten-only**" in text.split("`runtime.network`")[1].split("\n")[0]


def test_the_model_metadata_agrees_with_the_code_that_enforces_it() -> None:
    keys = {key.path: key for key in config_keys()}
    marked = {path.replace(SERVER, "*") for path, key in keys.items() if key.tighten_only}
    assert marked == {".".join(path) for path in TIGHTEN_ONLY_PATHS}
    assert {key.name: key.env for key in keys.values() if key.section == "gate"} == dict(ENV_VARS)


def test_a_key_without_help_is_refused() -> None:
    @attrs.frozen
    class Bare:
        x: int = 1

    from ptc_plus.config import keys as keys_module

    with pytest.raises(ValueError, match="no help"):
        keys_module._key("runtime", attrs.fields(Bare).x, Bare)


# -- the schema ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scope", list(Scope))
def test_the_schema_accepts_the_starter_file_as_written_and_with_every_key_on(scope: Scope) -> None:
    text = starter_text(scope)
    validator().validate(tomllib.loads(text))
    every = tomllib.loads(uncommented(text))
    assert every["runtime"]["timeout_s"] == 120.0 and every["capabilities"] == {
        "host:read_file": {"disclosure": "on-demand"}
    }
    validator().validate(every)


@pytest.mark.parametrize(
    "data",
    [
        {"runtime": {"timeout_s": "soon"}},
        {"runtime": {"policy": "yolo"}},
        {"runtime": {"timeout_s": 9000}},
        {"statistics": {"threshold": 1.5}},
        {"management": {"baseline": ["a", 2]}},
        {"capabilities": {"host:a": {"disclosure": "shown"}}},
        {"capabilities": {"host:a": {}}},
        {"runtime": {"timout_s": 3}},
        {"statistcs": {}},
        {"version": 2},
        {"mcp": {"servers": {"a b": {"command": "x"}}}},
        {"mcp": {"servers": {"t": {"args": ["x"]}}}},
        {"mcp": {"servers": {"t": {"command": "x", "env": {"A": 1}}}}},
        {"mcp": {"servers": {"t": {"command": "x", "timeout_s": 0}}}},
        {"mcp": {"servers": {"t": {"command": "x", "comand": "y"}}}},
        {"mcp": {"consent": {"relative/ws": {"t": "sha256:00"}}}},
        {"mcp": {"consent": {"/ws": {"t": "md5:00"}}}},
        {"mcp": {"servrs": {}}},
    ],
)
def test_the_schema_rejects_what_the_loader_rejects(data: dict[str, Any], tmp_path: Path) -> None:
    assert list(validator().iter_errors(data)) != []
    path = tmp_path / "config.toml"
    path.write_text(_toml(data), encoding="utf-8")
    assert load_config(None, user_file=path).issues != ()


def _toml(data: dict[str, Any]) -> str:
    import tomlkit

    return tomlkit.dumps(data)


def test_the_schema_default_of_each_key_is_the_models() -> None:
    schema = config_schema()
    defaults = PtcConfig()
    assert schema["properties"]["runtime"]["properties"]["timeout_s"]["default"] == defaults.runtime.timeout_s
    assert schema["properties"]["statistics"]["properties"]["window"]["default"] == defaults.statistics.window


# -- the starter file ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scope", list(Scope))
def test_the_starter_loads_clean_and_means_the_defaults(scope: Scope, tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(starter_text(scope), encoding="utf-8")
    loaded = load_config(None, user_file=path)
    assert loaded.issues == () and loaded.config == PtcConfig()


def test_with_every_key_on_the_starter_still_loads_clean(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(uncommented(starter_text(Scope.USER)), encoding="utf-8")
    loaded = load_config(None, user_file=path)
    assert loaded.issues == ()
    assert loaded.config.runtime == PtcConfig().runtime and loaded.config.statistics == PtcConfig().statistics


def test_the_user_starter_starts_with_the_schema_line_and_the_workspace_one_names_no_machine_path() -> None:
    assert starter_text(Scope.USER).splitlines()[0] == f"#:schema {schema_uri()}"
    committed = starter_text(Scope.WORKSPACE)
    assert "#:schema" not in committed.split("`#:schema`")[0] and "file://" not in committed
    assert str(SCHEMA_FILE.parent) not in committed and "ptc_plus/config/config.schema.json" in committed


def test_the_starter_explains_every_key() -> None:
    text = starter_text(Scope.WORKSPACE)
    rest = text.splitlines()
    for key in config_keys():
        if key.section and not key.templated:
            start = rest.index(f"[{key.section}]")
            index = next(i for i in range(start, len(rest)) if rest[i].startswith(f"# {key.name} = "))
            assert rest[index - 1].startswith(f"# {key.help}")
    assert "this file may only tighten it" in text and "this file may only tighten it" not in starter_text(Scope.USER)
    assert "`ptc-plus mcp trust NAME`" in text


def test_the_starter_mcp_example_switched_on_is_one_usable_server(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(uncommented(starter_text(Scope.USER)), encoding="utf-8")
    servers = load_config(None, user_file=path).config.mcp.servers
    assert list(servers) == ["time"] and servers["time"].command == "mcp-server-time"


def test_the_schema_line_points_at_the_packaged_schema_offline() -> None:
    uri = schema_uri()
    assert uri.startswith("file:///") and uri.endswith("/ptc_plus/config/config.schema.json")
    assert Path(uri.removeprefix("file://")).is_file()


def test_the_wheel_carries_the_schema(tmp_path: Path) -> None:
    from hatchling.builders.wheel import WheelBuilder

    (wheel,) = WheelBuilder(str(ROOT)).build(directory=str(tmp_path / "dist"), versions=["standard"])
    with zipfile.ZipFile(wheel) as archive:
        assert orjson.loads(archive.read("ptc_plus/config/config.schema.json")) == config_schema()
