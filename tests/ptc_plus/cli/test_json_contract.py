"""The ``--json`` contract: one versioned object on stdout per command, errors included (docs/cli.md).

Each command's object is checked against its JSON Schema in ``tests/data/cli/``
(closed: a key added or renamed fails here until the schema and docs/cli.md
follow), and every schema's keys must be documented in docs/cli.md.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from hookspecs.reference import AssistantTurn, ReferenceHost, ScriptedModel
from tests.cli_runner import CliRun, CliRunner

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = ROOT / "tests" / "data" / "cli"
TOOLS = ROOT / "tests" / "data" / "mcp" / "git.json"
CLI = str(Path(sys.executable).with_name("ptc-plus"))


def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads((SCHEMAS / f"{name}.schema.json").read_bytes())
    return loaded


def conforms(done: CliRun, name: str) -> dict[str, Any]:
    """The run printed exactly one object valid against schema ``name``, and nothing on stderr."""
    assert done.err == ""
    document: dict[str, Any] = done.json()  # one document: a second one would not parse
    jsonschema.Draft202012Validator(schema(name)).validate(document)
    assert done.out == orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"
    return document


def test_plugins(run_cli: CliRunner) -> None:
    done = run_cli("plugins", "--json")
    assert done.code == 0
    rows = conforms(done, "plugins")["plugins"]
    assert rows[0]["builtin"] and any(row["name"] == "ptc_plus" for row in rows)


def test_gate(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    done = run_cli("gate", "--user", "alice", "--workspace", str(workspace), "--json")
    assert done.code == 0
    assert conforms(done, "gate")["enabled"] is True


@pytest.mark.parametrize("budget", [[], ["--budget", "200"]])
def test_sdk(run_cli: CliRunner, budget: list[str]) -> None:
    done = run_cli("sdk", "--tools", str(TOOLS), *budget, "--json")
    assert done.code == 0
    document = conforms(done, "sdk")
    assert "async def git_add(" in document["text"]
    assert bool(document["not_expanded"]) is bool(budget)


def test_capabilities_plan(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    root = workspace
    (root / ".ptc-plus").mkdir()
    (root / ".ptc-plus" / "config.toml").write_text(
        'version = 1\n[management]\nenabled = true\n[capabilities."host:read_file"]\ndisclosure = "off"\n', "utf-8"
    )
    done = run_cli("capabilities", "plan", "--workspace", str(root), "--json")
    assert done.code == 0
    document = conforms(done, "capabilities-plan")
    assert document["workspace"] == str(root.resolve())
    assert set(document["reasons"]) == {entry["identity"] for entry in document["plan"]["entries"]}


@pytest.mark.parametrize("budget", [[], ["--budget", "100"]])
def test_capabilities_search(workspace: Path, tmp_path: Path, run_cli: CliRunner, budget: list[str]) -> None:
    done = run_cli("capabilities", "search", "read a file", "--workspace", str(workspace), *budget, "--json")
    assert done.code == 0
    document = conforms(done, "capabilities-search")
    assert document["expanded"] or document["not_expanded"]


def test_capabilities_set(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    root = workspace
    done = run_cli("capabilities", "set", "host:read_file", "off", "--workspace", str(root), "--json")
    assert done.code == 0
    document = conforms(done, "capabilities-set")
    assert (document["previous"], document["changed"], document["in_catalog"]) == (None, True, True)
    again = conforms(
        run_cli("capabilities", "set", "mcp:git/nothing", "inherit", "--workspace", str(root), "--json"),
        "capabilities-set",
    )
    assert again["changed"] is False


@pytest.mark.parametrize("scope", [[], ["--scope", "workspace"], ["--scope", "user"]])
def test_stats(workspace: Path, tmp_path: Path, run_cli: CliRunner, scope: list[str]) -> None:
    root = workspace
    done = run_cli("stats", "--workspace", str(root), *scope, "--json")
    assert done.code == 0
    document = conforms(done, "stats")
    assert (document["window"], document["min_samples"]) == (20, 5)
    assert {row["reason"] for row in document["capabilities"]} == {"no-sample"}
    assert all(row["coverage"] is None for row in document["capabilities"])


def workspace_file(root: Path, text: str | bytes) -> Path:
    """Write ``root``'s workspace config file."""
    path = root / ".ptc-plus" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return path


# ``--policy danger-full-access`` runs the program without bubblewrap; the demo tool set keeps standard
# error quiet (without --tools exec says on stderr that there are none).
NATIVE = ["--tools", "demo", "--policy", "danger-full-access"]
EXEC_CASES = [
    pytest.param(
        "r = await tools.read_file(path='notes.txt')\nprint('lines', len(r['lines']))\nreturn r['lines']\n",
        [],
        None,
        {"value": ["alpha", "beta"], "calls": 1, "logs": [{"stream": "stdout", "text": "lines 2\n"}]},
        id="value",
    ),
    pytest.param(
        "import sys\nsys.stderr.write('warn\\n')\nreturn None\n",
        [],
        None,
        {"value": None, "logs": [{"stream": "stderr", "text": "warn\n"}]},
        id="none",
    ),
    pytest.param("return 1\n", ["--timeout", "100000"], None, {"value": 1}, id="clamped-timeout-note"),
    pytest.param(
        "print('partial')\nraise ValueError('boom')\n",
        [],
        "exception",
        {"value": None, "logs": [{"stream": "stdout", "text": "partial\n"}]},
        id="exception",
    ),
    pytest.param("await tools.read_file(path='missing.txt')\n", [], "exception", {"calls": 1}, id="tool-failure"),
    pytest.param("while True:\n    pass\n", ["--timeout", "0.3"], "timeout", {"value": None}, id="timeout"),
]


@pytest.mark.parametrize(("program", "extra", "kind", "expected"), EXEC_CASES)
def test_exec(
    workspace: Path,
    tmp_path: Path,
    run_cli: CliRunner,
    program: str,
    extra: list[str],
    kind: str | None,
    expected: dict[str, Any],
) -> None:
    root = workspace
    (root / "notes.txt").write_text("alpha\nbeta\n", "utf-8")
    done = run_cli("exec", "--workspace", str(root), *NATIVE, *extra, "--json", stdin=program)
    assert done.code == (0 if kind is None else 1)
    document = conforms(done, "exec")
    assert document["ok"] is (kind is None)
    assert (document["error"] or {}).get("kind") == kind
    assert {key: document[key] for key in expected} == expected
    assert bool(document["notes"]) is ("100000" in extra)


def test_exec_output_over_the_configured_limit(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    root = workspace
    workspace_file(root, "version = 1\n[runtime]\nmax_output_bytes = 1000\n")
    done = run_cli("exec", "--workspace", str(root), *NATIVE, "--json", stdin="print('x' * 5000)\n")
    assert done.code == 1
    assert conforms(done, "exec")["error"]["kind"] == "output-limit"


@pytest.mark.needs_bwrap
@pytest.mark.parametrize(
    ("program", "code"),
    [("print('in the sandbox')\nreturn {'n': 1}\n", 0), ("1 / 0\n", 1)],
    ids=["succeeded", "failed"],
)
def test_exec_in_the_sandbox(workspace: Path, tmp_path: Path, run_cli: CliRunner, program: str, code: int) -> None:
    done = run_cli("exec", "--workspace", str(workspace), "--tools", "demo", "--json", stdin=program)
    assert done.code == code
    assert conforms(done, "exec")["ok"] is (code == 0)


def test_config_init(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    root = workspace
    done = run_cli("config", "init", "--workspace", str(root), "--json")
    assert done.code == 0
    document = conforms(done, "config-init")
    assert (document["scope"], document["path"], document["problems"]) == (
        "workspace",
        str(root / ".ptc-plus" / "config.toml"),
        [],
    )
    # The user file is written clean; the workspace file's problem is reported with it.
    workspace_file(root, "version = 1\n[runtime]\ntimout_s = 3\n")
    user = conforms(run_cli("config", "init", "--user", "--workspace", str(root), "--json"), "config-init")
    assert user["scope"] == "user" and [p["reason"] for p in user["problems"]] == ["unknown-key"]


def test_config_show(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    root = workspace
    clean = conforms(run_cli("config", "show", "--workspace", str(root), "--json"), "config-show")
    assert [f["exists"] for f in clean["files"]] == [False, False] and clean["problems"] == []
    user = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('version = 1\n[runtime]\ntimeout_s = 60\n[statistics]\nwindow = "x"\n', "utf-8")
    workspace_file(
        root,
        'version = 1\n[runtime]\npolicy = "read-only"\ntimout_s = 3\n[capabilities."host:read_file"]\n'
        'disclosure = "off"\n',
    )
    done = run_cli("config", "show", "--workspace", str(root), "--json")
    assert done.code == 0  # show answers; check is the command that fails
    document = conforms(done, "config-show")
    sources = {key["key"]: key["source"] for key in document["keys"]}
    assert sources["runtime.policy"] == "workspace" and sources["runtime.timeout_s"] == "user"
    assert sources["statistics.enabled"] == "config-problem"
    assert sources['capabilities."host:read_file".disclosure'] == "workspace"
    assert [p["reason"] for p in document["problems"]] == ["type", "unknown-key"]


def test_mcp_add_list_trust_remove(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    root = workspace
    argv = ["mcp", "add", "time", "--env", "TZ=UTC", "--workspace", str(root), "--json"]
    added = conforms(run_cli(*argv, "--", "mcp-server-time", "--local-timezone", "UTC"), "mcp-add")
    assert (added["scope"], added["changed"], added["server"]["args"]) == (
        "workspace",
        True,
        ["--local-timezone", "UTC"],
    )
    assert added["consent_file"] == str(tmp_path / "xdg" / "ptc-plus" / "config.toml")
    user = conforms(run_cli("mcp", "add", "u", "--user", "--workspace", str(root), "--json", "--", "x"), "mcp-add")
    assert (user["scope"], user["consent_file"]) == ("user", None)
    written = (root / ".ptc-plus" / "config.toml").read_text("utf-8")
    workspace_file(root, written + '[mcp.servers.r]\ncommand = "r"\nenabled = false\n')
    listed = conforms(run_cli("mcp", "list", "--workspace", str(root), "--json"), "mcp-list")
    assert [(s["name"], s["scope"], s["status"], s["code"]) for s in listed["servers"]] == [
        ("r", "workspace", "disabled", "PTC-4310"),
        ("time", "workspace", "configured", None),
        ("u", "user", "configured", None),
    ]
    trusted = conforms(run_cli("mcp", "trust", "r", "--workspace", str(root), "--json"), "mcp-trust")
    assert (trusted["needed"], trusted["changed"]) == (True, True)
    needless = conforms(run_cli("mcp", "trust", "u", "--workspace", str(root), "--json"), "mcp-trust")
    assert (needless["needed"], needless["file"]) == (False, None)
    removed = conforms(run_cli("mcp", "remove", "time", "--workspace", str(root), "--json"), "mcp-remove")
    assert (removed["changed"], removed["still_configured"]) == (True, False)


def test_sessions_of_a_workspace(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    root = workspace
    assert conforms(run_cli("sessions", "--workspace", str(root), "--json"), "sessions")["sessions"] == []

    async def one_session() -> str:
        async with ReferenceHost(workspace=root, state_dir=root / ".agent-host", load_entry_points=False) as host:
            session = await host.start_session(title="t", model=ScriptedModel([AssistantTurn(text="hi")]))
            await session.run_turn("hello there")
            return session.agent.session_id

    session_id = asyncio.run(one_session())
    listed = conforms(run_cli("sessions", "--workspace", str(root), "--json"), "sessions")["sessions"]
    assert [(s["id"], s["turns"], s["last_user_message"], s["problem"]) for s in listed] == [
        (session_id, 1, "hello there", "")
    ]


CHECKED = [
    pytest.param(None, 0, None, id="no-file"),
    pytest.param(b"version = 1\n[runtime]\ntimeout_s = 30\n", 0, None, id="good"),
    pytest.param(b"version = [\n", 1, ("PTC-4002", ""), id="bad-toml"),
    pytest.param(b"version = 1\n[runtime]\ntimout_s = 3\n", 1, ("PTC-4010", "unknown-key"), id="unknown-key"),
    pytest.param(b'version = 1\n[runtime]\ntimeout_s = "x"\n', 1, ("PTC-4010", "type"), id="wrong-type"),
    pytest.param(b"version = 2\n", 1, ("PTC-4003", ""), id="future-version"),
    pytest.param(b"version = 1\n# caf\xe9\n", 1, ("PTC-4001", "unreadable.not-utf8"), id="not-utf8"),
]


@pytest.mark.parametrize(("text", "code", "problem"), CHECKED)
def test_config_check(
    workspace: Path, tmp_path: Path, run_cli: CliRunner, text: bytes | None, code: int, problem: tuple[str, str] | None
) -> None:
    root = workspace
    if text is not None:
        workspace_file(root, text)
    done = run_cli("config", "check", "--workspace", str(root), "--json")
    assert done.code == code
    document = conforms(done, "config-check")
    assert document["ok"] is (code == 0)
    assert [(p["code"], p["reason"]) for p in document["problems"]] == ([problem] if problem else [])
    whole_file = problem is not None and problem[0] != "PTC-4010"
    assert document["files"][1]["usable"] is not whole_file


ERRORS = [
    (["plugins", "--no-such-option"], "PTC-1001"),
    (["gate", "--user", "u", "--workspace", "{missing}"], "PTC-1002"),
    (["gate"], "PTC-1001"),
    (["sdk", "--tools", "{missing}"], "PTC-3001"),
    (["sdk", "--tools", str(TOOLS), "--budget", "0"], "PTC-1001"),
    (["capabilities", "plan", "--workspace", "{missing}"], "PTC-1002"),
    (["capabilities", "plan", "--workspace", "{file}"], "PTC-1002"),
    (["capabilities", "search", "x", "--workspace", "{missing}"], "PTC-1002"),
    (["capabilities", "search", "x", "--limit", "0"], "PTC-1001"),
    (["capabilities", "set", "host:read_file", "sometimes", "--workspace", "{ws}"], "PTC-4021"),
    (["capabilities", "set", "host:read_file", "off", "--workspace", "{missing}"], "PTC-1002"),
    (["demo", "--workspace", "{file}"], "PTC-1001"),  # demo has no --json: the answer is still one object
    (["exec", "--workspace", "{missing}"], "PTC-1002"),
    (["exec", "--workspace", "{file}"], "PTC-1002"),
    (["exec", "--timeout", "0", "--workspace", "{ws}"], "PTC-1001"),
    (["exec", "{missing}", "--tools", "demo", "--workspace", "{ws}"], "PTC-1001"),
    (["exec", "--tools", "{missing}", "--workspace", "{ws}"], "PTC-3001"),
    (["config", "init", "--workspace", "{missing}"], "PTC-1002"),
    (["config", "init", "--workspace", "{file}"], "PTC-1002"),
    (["config", "show", "--workspace", "{missing}"], "PTC-1002"),
    (["config", "check", "--workspace", "{missing}"], "PTC-1002"),
    (["config", "check", "--no-such-option"], "PTC-1001"),
    (["config", "no-such-command"], "PTC-1001"),
    (["stats", "--workspace", "{missing}"], "PTC-1002"),
    (["stats", "--scope", "nowhere"], "PTC-1001"),
    (["no-such-command"], "PTC-1001"),
    (["mcp", "add", "bad name", "x", "--workspace", "{ws}"], "PTC-4301"),
    (["mcp", "add", "t", "x", "--env", "NOEQUALS", "--workspace", "{ws}"], "PTC-4304"),
    (["mcp", "add", "t", "x", "--workspace", "{missing}"], "PTC-1002"),
    (["mcp", "add", "t", "--workspace", "{ws}"], "PTC-1001"),
    (["mcp", "list", "--workspace", "{file}"], "PTC-1002"),
    (["mcp", "remove", "t", "--workspace", "{ws}"], "PTC-4302"),
    (["mcp", "trust", "t", "--workspace", "{ws}"], "PTC-4302"),
]


@pytest.mark.parametrize(("args", "code"), ERRORS, ids=[" ".join(a[:2]) + f" {c}" for a, c in ERRORS])
def test_an_error_under_json_is_one_error_object(
    workspace: Path, tmp_path: Path, run_cli: CliRunner, args: list[str], code: str
) -> None:
    root = workspace
    (tmp_path / "file").write_text("", "utf-8")
    places = {"missing": str(tmp_path / "nope"), "file": str(tmp_path / "file"), "ws": str(root)}
    done = run_cli(*[arg.format(**places) for arg in args], "--json")
    assert done.code in (1, 2)
    document = conforms(done, "error")
    assert document["error"]["code"] == code
    assert not (tmp_path / "nope").exists() and not (root / ".ptc-plus").exists()


def test_errors_a_config_file_causes_under_json(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    root = workspace
    workspace_file(root, 'version = 1\n[runtime]\npolicy = "read-only"\n')
    exists = run_cli("config", "init", "--workspace", str(root), "--json")
    assert exists.code == 1 and conforms(exists, "error")["error"]["code"] == "PTC-4023"
    argv = ["exec", "--workspace", str(root), "--tools", "demo", "--policy", "workspace-write", "--json"]
    looser = run_cli(*argv, stdin="return 1\n")
    assert looser.code == 2 and conforms(looser, "error")["error"]["code"] == "PTC-4030"


def test_the_real_executable_prints_the_same_object(tmp_path: Path) -> None:
    env = dict(os.environ)
    done = subprocess.run(
        [CLI, "capabilities", "plan", "--workspace", str(tmp_path / "nope"), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (2, "")
    assert orjson.loads(done.stdout)["error"]["code"] == "PTC-1002"


def _documented_sections() -> dict[str, str]:
    text = (ROOT / "docs" / "cli.md").read_text("utf-8")
    parts = re.split(r"^## ", text, flags=re.MULTILINE)
    return {part.split("\n", 1)[0].strip("` "): part for part in parts[1:]}


def _nested(node: Any) -> tuple[set[str], set[str]]:
    """Every property name below the top level of schema ``node``, and every string ``enum`` value in it."""
    keys: set[str] = set()
    values: set[str] = set()
    if isinstance(node, dict):
        for key, child in node.items():
            if key == "properties" and isinstance(child, dict):
                keys |= set(child)
            if key == "enum":
                values |= {value for value in child if isinstance(value, str) and value}
            inner_keys, inner_values = _nested(child)
            keys |= inner_keys
            values |= inner_values
    elif isinstance(node, list):
        for child in node:
            inner_keys, inner_values = _nested(child)
            keys |= inner_keys
            values |= inner_values
    return keys, values


# schema -> (its section, sections that document shapes it shares: "as in `sdk`")
DOCUMENTED = {
    "plugins": ("ptc-plus plugins", ()),
    "gate": ("ptc-plus gate", ()),
    "sdk": ("ptc-plus sdk", ()),
    "capabilities-plan": ("ptc-plus capabilities plan", ()),
    "capabilities-search": ("ptc-plus capabilities search", ("ptc-plus sdk",)),
    "capabilities-set": ("ptc-plus capabilities set", ()),
    "error": ("Errors", ()),
    "exec": ("ptc-plus exec", ()),
    "config-init": ("ptc-plus config init", ("ptc-plus config",)),
    "config-show": ("ptc-plus config show", ("ptc-plus config",)),
    "config-check": ("ptc-plus config check", ("ptc-plus config",)),
    "stats": ("ptc-plus stats", ()),
    "mcp-add": ("ptc-plus mcp add", ()),
    "mcp-list": ("ptc-plus mcp list", ("ptc-plus mcp add",)),
    "mcp-remove": ("ptc-plus mcp remove", ()),
    "mcp-trust": ("ptc-plus mcp trust", ("ptc-plus mcp add",)),
    "mcp-serve": ("ptc-plus mcp-serve", ()),
    "sessions": ("ptc-plus sessions", ()),
}
VALUES_UNLISTED = {"capabilities-plan"}
"""Schemas whose sections do not (yet) list every enum value (plan: the entries' ``scope``)."""


@pytest.mark.parametrize("name", DOCUMENTED)
def test_every_key_is_documented(name: str) -> None:
    section, shared = DOCUMENTED[name]
    sections = _documented_sections()
    for title in (section, *shared):
        assert title in sections, f"docs/cli.md has no section '## {title}'"
    for key in schema(name)["properties"]:
        assert f"`{key}`" in sections[section], f"docs/cli.md, {section}: key {key} is not documented"
    text = "".join(sections[title] for title in (section, *shared))
    # Nested keys and values must be named in the prose, in code (`key`, `{identity, name}`), not only
    # in an example: an example shows one case, the prose is the contract.
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    named = {word for span in re.findall(r"`([^`\n]+)`", prose) for word in re.findall(r"[\w.-]+", span)}
    keys, values = _nested(schema(name))
    assert not keys - named, f"docs/cli.md, {section}: keys not documented: {sorted(keys - named)}"
    if name not in VALUES_UNLISTED:
        assert not values - named, f"docs/cli.md, {section}: values not documented: {sorted(values - named)}"


def test_every_schema_has_its_documentation() -> None:
    assert {path.name.removesuffix(".schema.json") for path in SCHEMAS.glob("*.schema.json")} == set(DOCUMENTED)


def test_the_config_schemas_share_one_problem_and_one_file() -> None:
    """Every problem reason the plugin can give (its locale's config.reason.* and config.unreadable.* messages)."""
    problems = [schema(name)["$defs"]["problem"] for name in ("config-init", "config-show", "config-check")]
    assert problems[0] == problems[1] == problems[2]
    assert schema("config-show")["$defs"]["file"] == schema("config-check")["$defs"]["file"]
    messages = orjson.loads((ROOT / "locale" / "ptc_plus" / "en.json").read_bytes())
    reasons = {key.removeprefix("config.reason.") for key in messages if key.startswith("config.reason.")}
    # Wordings of unknown-key and choice with a "did you mean", never reasons of their own.
    reasons -= {"unknown-key-suggestion", "choice-suggestion"}
    reasons |= {key.removeprefix("config.") for key in messages if key.startswith("config.unreadable.")}
    assert set(problems[0]["properties"]["reason"]["enum"]) == reasons | {""}
