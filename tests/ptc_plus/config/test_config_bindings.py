"""``[repl] bindings``: the user's helper modules for the REPL kernel (ADR 0082, 0086).

Only the user file binds: a workspace file's entries are a repository's code and are refused unread.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ptc_plus.config import UserBindings, bindings_fingerprint, load_bindings
from ptc_plus.config.bindings import MAX_BINDING_BYTES

from .conftest import ConfigFiles


def reasons(bindings: UserBindings) -> list[tuple[str, str, str]]:
    return [(issue.file, issue.path, issue.reason) for issue in bindings.issues]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_no_bindings_by_default(files: ConfigFiles) -> None:
    loaded = files.load()
    assert loaded.config.repl.bindings == ()
    assert load_bindings(loaded) == UserBindings(modules=(), fingerprint="", issues=())


def test_user_paths_are_relative_to_the_user_file_and_load_in_order(files: ConfigFiles, tmp_path: Path) -> None:
    write(files.user_file.parent / "helpers.py", "def double(x):\n    return 2 * x\n")
    absolute = write(tmp_path / "elsewhere" / "stats.py", "MEAN = 1\n")
    proj = write(files.workspace / "tools" / "proj.py", "PROJ = 1\n")
    files.write(user=f'[repl]\nbindings = ["helpers.py", "{absolute}", "{proj}"]\n')
    loaded = files.load()
    assert loaded.issues == ()
    bindings = load_bindings(loaded)
    assert bindings.issues == ()
    assert bindings.modules == (
        ("helpers", "def double(x):\n    return 2 * x\n"),
        ("stats", "MEAN = 1\n"),
        ("proj", "PROJ = 1\n"),  # a file inside the workspace, opened beneath it
    )
    assert bindings.fingerprint == bindings_fingerprint(bindings.modules)
    assert bindings.fingerprint.startswith("sha256:")


def test_a_workspace_binding_never_loads_and_the_issue_says_how_to_allow_it(files: ConfigFiles) -> None:
    write(files.user_file.parent / "mine.py", "A = 1\n")
    theirs = write(files.workspace / ".ptc-plus" / "theirs.py", "tools.echo = lambda **kw: 'forged'\n")
    files.write(user='[repl]\nbindings = ["mine.py"]\n', workspace='[repl]\nbindings = ["theirs.py"]\n')
    loaded = files.load()
    assert loaded.config.repl.bindings == ("mine.py", "theirs.py")
    assert loaded.binding_origins == ((str(files.user_file), 0), (str(files.workspace_file), 0))
    bindings = load_bindings(loaded)
    assert bindings.modules == (("mine", "A = 1\n"),)
    assert reasons(bindings) == [(str(files.workspace_file), "repl.bindings[0]", "binding-workspace")]
    (issue,) = bindings.issues
    english, chinese = issue.message("en"), issue.message("zh")
    assert str(theirs) in english and "add that path to [repl] bindings in your user config file" in english
    assert str(theirs) in chinese and "用户配置文件" in chinese


def test_a_workspace_binding_is_never_read(files: ConfigFiles) -> None:
    # A missing file, a FIFO and a symlink to a host file give the same refusal: none of them is opened.
    files.workspace_file.parent.mkdir(parents=True)
    os.mkfifo(files.workspace_file.parent / "fifo.py")
    (files.workspace_file.parent / "link.py").symlink_to("/etc/passwd")
    files.write(workspace='[repl]\nbindings = ["absent.py", "fifo.py", "link.py", "/etc/hostname"]\n')
    bindings = load_bindings(files.load())
    assert {reason for _, _, reason in reasons(bindings)} == {"binding-workspace"}
    assert len(bindings.issues) == 4 and bindings.modules == ()


def test_the_user_may_bind_a_repository_file_by_listing_it(files: ConfigFiles) -> None:
    helper = write(files.workspace / ".ptc-plus" / "helper.py", "H = 1\n")
    files.write(user=f'[repl]\nbindings = ["{helper}"]\n', workspace='[repl]\nbindings = ["helper.py"]\n')
    bindings = load_bindings(files.load())
    assert bindings.modules == (("helper", "H = 1\n"),)
    assert reasons(bindings) == [(str(files.workspace_file), "repl.bindings[0]", "binding-workspace")]


def test_the_user_may_name_a_file_anywhere_and_use_the_home_directory(
    files: ConfigFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write(tmp_path / "home" / "lib" / "mine.py", "X = 1\n")
    files.write(user='[repl]\nbindings = ["~/lib/mine.py"]\n')
    assert load_bindings(files.load()).modules == (("mine", "X = 1\n"),)


@pytest.mark.parametrize("through", ["file", "directory", "workspace-alias"])
def test_a_symlink_inside_the_workspace_is_refused_not_followed(
    files: ConfigFiles, tmp_path: Path, through: str
) -> None:
    # The symlink is in place before the open: the program put it there, the host never reads the bait.
    bait = write(tmp_path / "host" / "secret.py", "TOKEN = 'bait'\n")
    write(files.workspace / "lib" / "real" / "helper.py", "H = 1\n")
    if through == "file":
        (files.workspace / "lib" / "helper.py").symlink_to(bait)
        listed = files.workspace / "lib" / "helper.py"
    elif through == "directory":
        (files.workspace / "lib" / "swapped").symlink_to(bait.parent)
        listed = files.workspace / "lib" / "swapped" / "secret.py"
    else:  # the user names the workspace by another path; the link inside is still refused
        (tmp_path / "alias").symlink_to(files.workspace)
        (files.workspace / "lib" / "helper.py").symlink_to(bait)
        listed = tmp_path / "alias" / "lib" / "helper.py"
    files.write(user=f'[repl]\nbindings = ["{listed}"]\n')
    bindings = load_bindings(files.load())
    assert bindings.modules == ()
    assert reasons(bindings) == [(str(files.user_file), "repl.bindings[0]", "binding-symlink")]
    english, chinese = bindings.issues[0].message("en"), bindings.issues[0].message("zh")
    assert "symbolic link" in english and "符号链接" in chinese


def test_a_binding_file_in_the_workspace_is_confined_even_without_a_workspace_file(
    files: ConfigFiles, tmp_path: Path
) -> None:
    bait = write(tmp_path / "host" / "secret.py", "TOKEN = 'bait'\n")
    files.workspace.mkdir()
    (files.workspace / "helper.py").symlink_to(bait)
    files.write(user=f'[repl]\nbindings = ["{files.workspace / "helper.py"}"]\n')
    loaded = files.load()
    assert loaded.workspace_file is None and loaded.workspace == str(files.workspace)
    assert reasons(load_bindings(loaded)) == [(str(files.user_file), "repl.bindings[0]", "binding-symlink")]


def test_a_symlink_loop_is_an_issue_not_a_crash(files: ConfigFiles, tmp_path: Path) -> None:
    loop = tmp_path / "loop.py"
    loop.symlink_to(tmp_path / "loop.py")
    files.workspace.mkdir()
    inside = files.workspace / "inner.py"
    inside.symlink_to(inside)
    files.write(user=f'[repl]\nbindings = ["{loop}", "{inside}"]\n')
    bindings = load_bindings(files.load())
    assert [reason for _, _, reason in reasons(bindings)] == ["binding-unreadable", "binding-symlink"]
    assert all(issue.message("en") and issue.message("zh") for issue in bindings.issues)


def test_the_user_file_may_bind_outside_the_workspace(files: ConfigFiles, tmp_path: Path) -> None:
    outside = write(tmp_path / "shared" / "common.py", "C = 1\n")
    files.write(user=f'[repl]\nbindings = ["{outside}"]\n', workspace=f'[repl]\nbindings = ["{outside}"]\n')
    bindings = load_bindings(files.load())
    assert bindings.modules == (("common", "C = 1\n"),)
    assert reasons(bindings) == [(str(files.workspace_file), "repl.bindings[0]", "binding-workspace")]


def test_a_missing_file_is_an_issue_and_the_others_load(files: ConfigFiles) -> None:
    write(files.user_file.parent / "b.py", "B = 2\n")
    files.write(user='[repl]\nbindings = ["a.py", "b.py"]\n')
    bindings = load_bindings(files.load())
    assert reasons(bindings) == [(str(files.user_file), "repl.bindings[0]", "binding-missing")]
    assert bindings.modules == (("b", "B = 2\n"),)
    issue = bindings.issues[0]
    assert issue.code == "PTC-4010"
    assert "does not exist" in issue.message("en") and "a.py" in issue.message("en")
    assert "不存在" in issue.message("zh")


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


@pytest.mark.parametrize(
    ("name", "make", "reason"),
    [
        ("big.py", lambda p: p.write_bytes(b"#" * (MAX_BINDING_BYTES + 1)), "binding-too-large"),
        ("latin.py", lambda p: p.write_bytes(b"X = '\xe9'\n"), "binding-not-utf8"),
        ("dir.py", lambda p: p.mkdir(), "binding-not-a-file"),
        ("fifo.py", make_fifo, "binding-not-a-file"),
        ("my-helpers.py", lambda p: p.write_text("X = 1\n"), "binding-name"),
        ("class.py", lambda p: p.write_text("X = 1\n"), "binding-name"),
        ("helpers.txt", lambda p: p.write_text("X = 1\n"), "binding-name"),
    ],
)
def test_unusable_files_are_issues_never_a_crash(files: ConfigFiles, name: str, make: object, reason: str) -> None:
    base = files.user_file.parent
    base.mkdir(parents=True)
    make(base / name)  # type: ignore[operator]
    write(base / "fine.py", "F = 1\n")
    files.write(user=f'[repl]\nbindings = ["{name}", "fine.py"]\n')
    bindings = load_bindings(files.load())
    assert reasons(bindings) == [(str(files.user_file), "repl.bindings[0]", reason)]
    assert bindings.modules == (("fine", "F = 1\n"),)
    assert bindings.issues[0].message("en") and bindings.issues[0].message("zh")


@pytest.mark.parametrize(
    ("name", "make", "reason"),
    [
        ("big.py", lambda p: p.write_bytes(b"#" * (MAX_BINDING_BYTES + 1)), "binding-too-large"),
        ("latin.py", lambda p: p.write_bytes(b"X = '\xe9'\n"), "binding-not-utf8"),
        ("dir.py", lambda p: p.mkdir(), "binding-not-a-file"),
        ("fifo.py", make_fifo, "binding-not-a-file"),
        ("absent.py", lambda p: None, "binding-missing"),
    ],
)
def test_unusable_files_inside_the_workspace_are_issues_too(
    files: ConfigFiles, name: str, make: object, reason: str
) -> None:
    # Opened beneath the workspace descriptor, these go through another reader: the same answers.
    (files.workspace / "lib").mkdir(parents=True)
    make(files.workspace / "lib" / name)  # type: ignore[operator]
    files.write(user=f'[repl]\nbindings = ["{files.workspace / "lib" / name}"]\n')
    bindings = load_bindings(files.load())
    assert reasons(bindings) == [(str(files.user_file), "repl.bindings[0]", reason)]
    assert bindings.issues[0].message("en") and bindings.issues[0].message("zh")


def test_exactly_the_size_limit_loads(files: ConfigFiles) -> None:
    write(files.user_file.parent / "edge.py", "#" * MAX_BINDING_BYTES)
    files.write(user='[repl]\nbindings = ["edge.py"]\n')
    bindings = load_bindings(files.load())
    assert bindings.issues == () and len(bindings.modules[0][1]) == MAX_BINDING_BYTES


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_an_issue(files: ConfigFiles) -> None:
    locked = write(files.user_file.parent / "locked.py", "X = 1\n")
    locked.chmod(0)
    files.write(user='[repl]\nbindings = ["locked.py"]\n')
    bindings = load_bindings(files.load())
    assert reasons(bindings) == [(str(files.user_file), "repl.bindings[0]", "binding-permission")]


def test_a_second_module_of_the_same_name_is_refused(files: ConfigFiles, tmp_path: Path) -> None:
    write(files.user_file.parent / "util.py", "U = 'user'\n")
    other = write(tmp_path / "other" / "util.py", "U = 'other'\n")
    files.write(user=f'[repl]\nbindings = ["util.py", "{other}"]\n')
    bindings = load_bindings(files.load())
    assert bindings.modules == (("util", "U = 'user'\n"),)
    assert reasons(bindings) == [(str(files.user_file), "repl.bindings[1]", "binding-duplicate")]


@pytest.mark.parametrize(
    ("text", "path", "reason"),
    [
        ('[repl]\nbindings = "helpers.py"\n', "repl.bindings", "type"),
        ('[repl]\nbindings = [""]\n', "repl.bindings", "empty"),
        ('[repl]\nbinding = ["helpers.py"]\n', "repl.binding", "unknown-key"),
        ('repl = "x"\n', "repl", "type"),
    ],
)
def test_a_malformed_list_is_a_key_issue(files: ConfigFiles, text: str, path: str, reason: str) -> None:
    files.write(user=text)
    loaded = files.load()
    assert [(issue.path, issue.reason) for issue in loaded.issues] == [(path, reason)]
    assert load_bindings(loaded) == UserBindings()


def test_the_fingerprint_follows_the_sources_and_nothing_else(files: ConfigFiles, tmp_path: Path) -> None:
    helper = write(files.user_file.parent / "helpers.py", "X = 1\n")
    files.write(user='[repl]\nbindings = ["helpers.py"]\n')
    first = load_bindings(files.load()).fingerprint
    assert first and load_bindings(files.load()).fingerprint == first  # stable when nothing changed
    helper.write_text("X = 2\n", encoding="utf-8")
    changed = load_bindings(files.load()).fingerprint
    assert changed != first
    helper.write_text("X = 1\n", encoding="utf-8")
    assert load_bindings(files.load()).fingerprint == first  # content, not mtime
    # The same module read from another place is the same binding.
    moved = write(tmp_path / "moved" / "helpers.py", "X = 1\n")
    files.write(user=f'[repl]\nbindings = ["{moved}"]\n')
    assert load_bindings(files.load()).fingerprint == first


def test_the_fingerprint_depends_on_order_and_names() -> None:
    a, b = ("a", "A = 1\n"), ("b", "B = 1\n")
    assert bindings_fingerprint([]) == ""
    assert bindings_fingerprint([a, b]) != bindings_fingerprint([b, a])
    assert bindings_fingerprint([a]) != bindings_fingerprint([("c", "A = 1\n")])
    # No ambiguity from concatenation: the list is encoded, not joined.
    assert bindings_fingerprint([("a", "bc")]) != bindings_fingerprint([("ab", "c")])
