"""``[repl] bindings``: the user's and the workspace's helper modules for the REPL kernel (SPEC §8, ADR 0082)."""

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


def test_user_paths_are_relative_to_the_user_file_and_both_lists_load_user_first(
    files: ConfigFiles, tmp_path: Path
) -> None:
    write(files.user_file.parent / "helpers.py", "def double(x):\n    return 2 * x\n")
    absolute = write(tmp_path / "elsewhere" / "stats.py", "MEAN = 1\n")
    write(files.workspace / ".ptc-plus" / "local.py", "LOCAL = 1\n")
    write(files.workspace / "tools" / "proj.py", "PROJ = 1\n")
    files.write(
        user=f'[repl]\nbindings = ["helpers.py", "{absolute}"]\n',
        workspace='[repl]\nbindings = ["local.py", "../tools/proj.py"]\n',
    )
    loaded = files.load()
    assert loaded.issues == ()
    bindings = load_bindings(loaded)
    assert bindings.issues == ()
    assert bindings.modules == (
        ("helpers", "def double(x):\n    return 2 * x\n"),
        ("stats", "MEAN = 1\n"),
        ("local", "LOCAL = 1\n"),
        ("proj", "PROJ = 1\n"),
    )
    assert bindings.fingerprint == bindings_fingerprint(bindings.modules)
    assert bindings.fingerprint.startswith("sha256:")


def test_a_workspace_adds_to_the_user_bindings_it_does_not_replace_them(files: ConfigFiles) -> None:
    write(files.user_file.parent / "mine.py", "A = 1\n")
    write(files.workspace / ".ptc-plus" / "theirs.py", "B = 1\n")
    files.write(user='[repl]\nbindings = ["mine.py"]\n', workspace='[repl]\nbindings = ["theirs.py"]\n')
    loaded = files.load()
    assert loaded.config.repl.bindings == ("mine.py", "theirs.py")
    assert loaded.binding_origins == ((str(files.user_file), 0), (str(files.workspace_file), 0))
    assert [name for name, _ in load_bindings(loaded).modules] == ["mine", "theirs"]


def test_the_user_may_name_a_file_anywhere_and_use_the_home_directory(
    files: ConfigFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write(tmp_path / "home" / "lib" / "mine.py", "X = 1\n")
    files.write(user='[repl]\nbindings = ["~/lib/mine.py"]\n')
    assert load_bindings(files.load()).modules == (("mine", "X = 1\n"),)


@pytest.mark.parametrize("how", ["absolute", "relative", "home", "symlink"])
def test_a_workspace_cannot_bind_a_file_outside_it(
    files: ConfigFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    secret = write(tmp_path / "home" / "secret.py", "TOKEN = 'x'\n")
    write(files.workspace / ".ptc-plus" / "ok.py", "OK = 1\n")
    named = {"absolute": str(secret), "relative": "../../home/secret.py", "home": "~/secret.py", "symlink": "link.py"}
    if how == "symlink":
        (files.workspace / ".ptc-plus" / "link.py").symlink_to(secret)
    files.write(workspace=f'[repl]\nbindings = ["{named[how]}", "ok.py"]\n')
    bindings = load_bindings(files.load())
    assert reasons(bindings) == [(str(files.workspace_file), "repl.bindings[0]", "binding-outside-workspace")]
    assert bindings.modules == (("ok", "OK = 1\n"),)  # the valid one still loads
    english, chinese = bindings.issues[0].message("en"), bindings.issues[0].message("zh")
    assert "outside the workspace" in english and str(secret) in english
    assert "工作区" in chinese and str(secret) in chinese


def test_the_user_file_may_bind_what_the_workspace_may_not(files: ConfigFiles, tmp_path: Path) -> None:
    outside = write(tmp_path / "shared" / "common.py", "C = 1\n")
    files.write(user=f'[repl]\nbindings = ["{outside}"]\n', workspace=f'[repl]\nbindings = ["{outside}"]\n')
    bindings = load_bindings(files.load())
    assert bindings.modules == (("common", "C = 1\n"),)
    assert reasons(bindings) == [(str(files.workspace_file), "repl.bindings[0]", "binding-outside-workspace")]


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


def test_a_second_module_of_the_same_name_is_refused(files: ConfigFiles) -> None:
    write(files.user_file.parent / "util.py", "U = 'user'\n")
    write(files.workspace / ".ptc-plus" / "util.py", "U = 'workspace'\n")
    files.write(user='[repl]\nbindings = ["util.py"]\n', workspace='[repl]\nbindings = ["util.py"]\n')
    bindings = load_bindings(files.load())
    assert bindings.modules == (("util", "U = 'user'\n"),)
    assert reasons(bindings) == [(str(files.workspace_file), "repl.bindings[0]", "binding-duplicate")]


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
