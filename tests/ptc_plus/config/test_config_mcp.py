"""``[mcp.servers.<name>]``: loading, per-key validation, and the consent rule of ADR 0071."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ptc_plus.config import McpServer, Refusal, fingerprint, load_config, mcp_servers, server_cwd
from ptc_plus.config.mcp import consent_key

from .conftest import ConfigFiles

TIME = '[mcp.servers.time]\ncommand = "mcp-server-time"\nargs = ["--local-timezone", "UTC"]\n'


def consent(files: ConfigFiles, name: str, server: McpServer, workspace: Path | None = None) -> str:
    place = consent_key(workspace or files.workspace)
    return f'[mcp.consent."{place}"]\n{name} = "{fingerprint(server)}"\n'


def test_a_server_loads_with_its_defaults(files: ConfigFiles) -> None:
    files.write(user=TIME + 'env = { TZ = "UTC" }\n')
    loaded = files.load()
    assert loaded.issues == ()
    server = loaded.config.mcp.servers["time"]
    assert server == McpServer(command="mcp-server-time", args=("--local-timezone", "UTC"), env={"TZ": "UTC"})
    assert (server.cwd, server.timeout_s, server.enabled) == (None, 30.0, True)


@pytest.mark.parametrize(
    ("text", "path", "reason"),
    [
        ('[mcp.servers."two words"]\ncommand = "x"\n', 'mcp.servers."two words"', "server-name"),
        ("[mcp.servers.t]\nargs = []\n", "mcp.servers.t.command", "required"),
        ('[mcp.servers.t]\ncommand = "  "\n', "mcp.servers.t.command", "empty"),
        ('[mcp.servers.t]\ncommand = "x"\ntimeout_s = 0\n', "mcp.servers.t.timeout_s", "positive"),
        ('[mcp.servers.t]\ncommand = "x"\ntimeout_s = nan\n', "mcp.servers.t.timeout_s", "finite"),
        ('[mcp.servers.t]\ncommand = "x"\nstart_timeout_s = 0\n', "mcp.servers.t.start_timeout_s", "positive"),
        ('[mcp.servers.t]\ncommand = "x"\nargs = "--flag"\n', "mcp.servers.t.args", "type"),
        ('[mcp.servers.t]\ncommand = "x"\nenv = { A = 1 }\n', "mcp.servers.t.env['A']", "type"),
        ('[mcp.servers.t]\ncommand = "x"\ncomand = "y"\n', "mcp.servers.t.comand", "unknown-key"),
        ("[mcp]\nservrs = {}\n", "mcp.servrs", "unknown-key"),
        ('[mcp.consent."relative"]\nt = "sha256:00"\n', "mcp.consent.relative", "absolute-path"),
        ('[mcp.consent."/w"]\nt = "md5:00"\n', 'mcp.consent."/w".t', "fingerprint"),
    ],
)
def test_each_bad_key_is_one_located_issue_and_the_rest_still_counts(
    files: ConfigFiles, text: str, path: str, reason: str
) -> None:
    files.write(user=TIME + text)
    loaded = files.load()
    assert [(issue.path, issue.reason) for issue in loaded.issues] == [(path, reason)]
    assert loaded.issues[0].line is not None or "[" in path  # a key inside an inline table: its file only
    assert "time" in loaded.config.mcp.servers  # the neighbour survives
    assert loaded.issues[0].message("zh") != loaded.issues[0].message("en")


def test_a_server_without_its_command_is_left_out(files: ConfigFiles) -> None:
    files.write(user='[mcp.servers.t]\nargs = ["x"]\n')
    loaded = files.load()
    assert loaded.config.mcp.servers == {}
    assert [(issue.path, issue.reason, issue.file) for issue in loaded.issues] == [
        ("mcp.servers.t.command", "required", str(files.user_file))
    ]


def test_a_non_table_servers_key_is_a_type_issue(files: ConfigFiles) -> None:
    files.write(user="[mcp]\nservers = 3\n")
    assert [(issue.path, issue.reason) for issue in files.load().issues] == [("mcp.servers", "type")]


def test_a_user_file_server_runs_without_consent(files: ConfigFiles) -> None:
    files.write(user=TIME)
    found = mcp_servers(files.load(), files.workspace)
    assert list(found.usable) == ["time"] and found.refused == () and found.workspace_servers == frozenset()


def test_a_workspace_server_waits_for_the_users_consent_to_exactly_that_definition(files: ConfigFiles) -> None:
    files.write(workspace=TIME)
    found = mcp_servers(files.load(), files.workspace)
    assert found.usable == {}
    (refused,) = found.refused
    assert (refused.name, refused.reason, refused.code) == ("time", Refusal.NOT_TRUSTED, "PTC-4311")
    assert refused.file == str(files.workspace_file)
    assert f"ptc-plus mcp trust time --workspace {consent_key(files.workspace)}" in refused.message("en")
    assert "ptc-plus mcp trust time" in refused.message("zh")

    server = files.load().config.mcp.servers["time"]
    files.write(user=consent(files, "time", server))
    assert list(mcp_servers(files.load(), files.workspace).usable) == ["time"]

    # The repository changes the program after consent: refused again, as "changed".
    files.write(workspace=TIME.replace("UTC", "Europe/Paris"))
    (changed,) = mcp_servers(files.load(), files.workspace).refused
    assert (changed.reason, changed.code) == (Refusal.CHANGED, "PTC-4312")


def test_consent_is_per_workspace_real_path(files: ConfigFiles, tmp_path: Path) -> None:
    files.write(workspace=TIME)
    server = files.load().config.mcp.servers["time"]
    files.write(user=consent(files, "time", server, workspace=tmp_path / "elsewhere"))
    assert mcp_servers(files.load(), files.workspace).refused[0].reason is Refusal.NOT_TRUSTED
    link = tmp_path / "link"
    os.symlink(files.workspace, link)
    files.write(user=consent(files, "time", server))
    # The same workspace reached through a symlink is the same workspace.
    assert list(mcp_servers(load_config(link, user_file=files.user_file), link).usable) == ["time"]


def test_a_workspace_file_cannot_consent_for_itself(files: ConfigFiles) -> None:
    files.write(workspace=TIME)
    server = files.load().config.mcp.servers["time"]
    files.write(workspace=TIME + consent(files, "time", server))
    loaded = files.load()
    assert [(issue.path, issue.reason) for issue in loaded.issues] == [("mcp.consent", "user-only")]
    assert loaded.config.mcp.consent == {}
    assert mcp_servers(loaded, files.workspace).refused[0].reason is Refusal.NOT_TRUSTED


@pytest.mark.parametrize(
    "overlay",
    [
        '[mcp.servers.time]\nargs = ["--evil"]\n',
        '[mcp.servers.time]\ncommand = "sh"\n',
        '[mcp.servers.time.env]\nLD_PRELOAD = "/tmp/x.so"\n',
        '[mcp.servers.time]\ncwd = "/"\n',
    ],
)
def test_a_workspace_file_changing_the_program_of_a_user_server_needs_consent(files: ConfigFiles, overlay: str) -> None:
    files.write(user=TIME, workspace=overlay)
    found = mcp_servers(files.load(), files.workspace)
    assert found.usable == {} and found.workspace_servers == {"time"}
    assert found.refused[0].reason is Refusal.NOT_TRUSTED


@pytest.mark.parametrize("overlay", ["[mcp.servers.time]\ntimeout_s = 5\n", "[mcp.servers.time]\nenabled = true\n"])
def test_a_workspace_file_may_tune_a_user_server_without_consent(files: ConfigFiles, overlay: str) -> None:
    files.write(user=TIME, workspace=overlay)
    assert list(mcp_servers(files.load(), files.workspace).usable) == ["time"]


def test_a_disabled_server_is_refused_as_disabled_first(files: ConfigFiles) -> None:
    files.write(user=TIME + "enabled = false\n")
    (refused,) = mcp_servers(files.load(), files.workspace).refused
    assert (refused.reason, refused.code) == (Refusal.DISABLED, "PTC-4310")
    files.write(user="", workspace=TIME + "enabled = false\n")
    assert mcp_servers(files.load(), files.workspace).refused[0].reason is Refusal.DISABLED


def test_the_fingerprint_covers_the_program_and_nothing_else() -> None:
    base = McpServer(command="x", args=("a",), env={"K": "v"}, cwd="sub")
    assert fingerprint(base) == fingerprint(McpServer(command="x", args=("a",), env={"K": "v"}, cwd="sub"))
    assert fingerprint(base).startswith("sha256:") and len(fingerprint(base)) == 7 + 64
    for other in (
        McpServer(command="y", args=("a",), env={"K": "v"}, cwd="sub"),
        McpServer(command="x", args=("a", "b"), env={"K": "v"}, cwd="sub"),
        McpServer(command="x", args=("a",), env={"K": "w"}, cwd="sub"),
        McpServer(command="x", args=("a",), env={"K": "v"}, cwd=None),
    ):
        assert fingerprint(other) != fingerprint(base)
    tuned = McpServer(
        command="x", args=("a",), env={"K": "v"}, cwd="sub", timeout_s=1, start_timeout_s=5, enabled=False
    )
    assert fingerprint(tuned) == fingerprint(base)


def test_the_server_cwd_is_relative_to_the_workspace(tmp_path: Path) -> None:
    for owned in (True, False):
        assert server_cwd(McpServer(command="x", cwd="sub"), tmp_path, from_workspace=owned) == tmp_path / "sub"
        assert server_cwd(McpServer(command="x", cwd="/abs"), tmp_path, from_workspace=owned) == Path("/abs")


def test_an_unset_cwd_is_the_workspace_for_a_workspace_server_and_the_home_for_a_user_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert server_cwd(McpServer(command="x"), tmp_path, from_workspace=True) == tmp_path
    assert server_cwd(McpServer(command="x"), tmp_path, from_workspace=False) == home
