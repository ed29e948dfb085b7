"""hookspecs.workspace_files: every path resolved beneath the root on the opened descriptors.

Real symlinks, FIFOs and a racing thread that swaps a directory with a
symlink out of the root (``renameat2(RENAME_EXCHANGE)``); after each test a
bait file outside keeps its content and a directory outside stays empty.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import hookspecs
from hookspecs import ToolFailure, workspace_files
from hookspecs.workspace_files import (
    DirectoryEntry,
    EntryKind,
    NotADirectory,
    NotARegularFile,
    OutsideWorkspace,
    PathNotFound,
    SymlinkRefused,
    WorkspaceFile,
    WorkspacePathError,
    list_directory,
    open_directory,
    open_file,
    read_bytes,
    relative_parts,
    replace_file,
    walk_files,
    workspace_root,
)
from tests.racing import exchange, swapping

BAIT = b"BAIT-OUTSIDE-THE-ROOT\n"
ROUNDS = 400
HANG_GUARD_S = 30.0  # only keeps a regression from hanging the suite; never a performance bound


def in_thread_with_guard(function: object) -> object:
    """Run ``function()`` in a thread; fail (instead of hanging) when it has not returned after the guard."""
    assert callable(function)
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = function()
        except BaseException as error:
            box["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), "blocked"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    return path


@pytest.fixture
def bait(tmp_path: Path) -> Path:
    path = tmp_path / "bait"
    path.mkdir()
    (path / "secret.txt").write_bytes(BAIT)
    return path


@pytest.fixture
def root_fd(root: Path) -> Iterator[int]:
    with workspace_root(root) as fd:
        yield fd


def untouched(outside: Path, bait: Path) -> None:
    assert list(outside.iterdir()) == []
    assert [p.name for p in bait.iterdir()] == ["secret.txt"] and (bait / "secret.txt").read_bytes() == BAIT


# --- paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "parts"),
    [("", ()), (".", ()), ("a", ("a",)), ("./a//b/", ("a", "b")), ("a/./b", ("a", "b")), ("a\\b", ("a\\b",))],
)
def test_relative_parts(path: str, parts: tuple[str, ...]) -> None:
    assert relative_parts(path) == parts


@pytest.mark.parametrize("path", ["/etc/passwd", "..", "a/../b", "a/..", "../x", "//x"])
def test_absolute_paths_and_dotdot_are_outside(path: str) -> None:
    with pytest.raises(OutsideWorkspace) as caught:
        relative_parts(path)
    assert caught.value.code == "outside-workspace" and caught.value.path == path


def test_a_nul_byte_is_an_invalid_path() -> None:
    with pytest.raises(WorkspacePathError) as caught:
        relative_parts("a\0b")
    assert type(caught.value) is WorkspacePathError and caught.value.code == "invalid-path"


def test_errors_become_tool_failures_with_a_stable_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTC_LOCALE", "en")
    failure = SymlinkRefused("d/x").tool_failure()
    assert isinstance(failure, ToolFailure)
    assert (failure.code, failure.data) == ("symlink", {"path": "d/x"})
    assert "'d/x'" in failure.message and "symlink" in failure.message
    monkeypatch.setenv("PTC_LOCALE", "zh")
    assert "符号链接" in str(SymlinkRefused("d/x"))
    codes = {cls.code for cls in (OutsideWorkspace, SymlinkRefused, PathNotFound, NotADirectory, NotARegularFile)}
    assert codes == {"outside-workspace", "symlink", "not-found", "not-a-directory", "not-a-regular-file"}


def test_the_contract_exports_the_helper() -> None:
    assert hookspecs.workspace_files.read_bytes is read_bytes
    for name in ("WorkspacePathError", "SymlinkRefused", "NotARegularFile", "OutsideWorkspace", "PathNotFound"):
        assert name in hookspecs.__all__ and getattr(hookspecs, name) is getattr(hookspecs.workspace_files, name)


# --- refusals -------------------------------------------------------------------------------


def test_symlinks_are_refused_anywhere_in_the_path(root: Path, root_fd: int, bait: Path, outside: Path) -> None:
    (root / "real").mkdir()
    (root / "real" / "f.txt").write_text("inside\n")
    (root / "out").symlink_to(bait)
    (root / "in").symlink_to(root / "real")  # leads inside, refused all the same
    (root / "file-link").symlink_to(bait / "secret.txt")
    (root / "real" / "inner").symlink_to("f.txt")
    for path in ("out/secret.txt", "in/f.txt", "file-link", "real/inner"):
        with pytest.raises(SymlinkRefused):
            read_bytes(root_fd, path)
    for path in ("out", "in"):
        with pytest.raises(SymlinkRefused):
            open_directory(root_fd, path)
        with pytest.raises(SymlinkRefused):
            list_directory(root_fd, path)
        with pytest.raises(SymlinkRefused):
            replace_file(root_fd, f"{path}/planted", b"x")
        with pytest.raises(SymlinkRefused):
            open_directory(root_fd, f"{path}/new", create=True)
    with pytest.raises(SymlinkRefused):
        open_file(root_fd, "file-link", os.O_WRONLY | os.O_CREAT)
    dangling = root / "dangling"
    dangling.symlink_to(outside / "created-through-link")
    with pytest.raises(SymlinkRefused):
        open_file(root_fd, "dangling", os.O_WRONLY | os.O_CREAT)
    untouched(outside, bait)


def test_fifos_are_refused_without_blocking(root: Path, root_fd: int) -> None:
    os.mkfifo(root / "pipe")
    for flags in (os.O_RDONLY, os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_TRUNC):
        with pytest.raises(NotARegularFile):
            in_thread_with_guard(lambda flags=flags: open_file(root_fd, "pipe", flags))  # type: ignore[misc]
    with pytest.raises(NotARegularFile):
        in_thread_with_guard(lambda: read_bytes(root_fd, "pipe"))


def test_a_fifo_swapped_in_at_the_last_moment_is_refused_without_blocking(root: Path, root_fd: int) -> None:
    (root / "f").write_text("text\n")
    os.mkfifo(root / "pipe")
    seen: list[object] = []

    def reads() -> None:
        for _ in range(ROUNDS):
            try:
                seen.append(read_bytes(root_fd, "f"))
            except NotARegularFile as error:
                seen.append(error)

    with swapping(root / "f", root / "pipe") as swaps:
        in_thread_with_guard(reads)
    assert swaps[0] > 0
    assert {type(value) for value in seen} <= {bytes, NotARegularFile}
    assert all(value == b"text\n" for value in seen if isinstance(value, bytes))


def test_directories_are_not_files_and_files_are_not_directories(root: Path, root_fd: int) -> None:
    (root / "d").mkdir()
    (root / "f").write_text("x")
    with pytest.raises(NotARegularFile):
        read_bytes(root_fd, "d")
    with pytest.raises(NotARegularFile):
        open_file(root_fd, "d", os.O_WRONLY)
    with pytest.raises(NotARegularFile):
        replace_file(root_fd, "d", b"x")
    with pytest.raises(NotADirectory):
        open_directory(root_fd, "f")
    with pytest.raises(NotADirectory):
        read_bytes(root_fd, "f/g")
    with pytest.raises(NotADirectory):
        replace_file(root_fd, "f/g", b"x")
    with pytest.raises(PathNotFound):
        read_bytes(root_fd, "missing")
    with pytest.raises(PathNotFound):
        read_bytes(root_fd, "missing/f")
    with pytest.raises(PathNotFound):
        replace_file(root_fd, "missing/f", b"x", create_parents=False)
    with pytest.raises(ValueError):
        read_bytes(root_fd, ".")
    with pytest.raises(ValueError):
        open_file(root_fd, "f", os.O_RDONLY | os.O_DIRECTORY)
    assert sorted(p.name for p in root.iterdir()) == ["d", "f"]  # no temporary file left behind


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_devices_are_refused_without_being_opened(root: Path, root_fd: int) -> None:
    os.mknod(root / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))  # reads would never end
    with pytest.raises(NotARegularFile):
        read_bytes(root_fd, "zero")
    with pytest.raises(NotARegularFile):
        open_file(root_fd, "zero", os.O_WRONLY)
    assert list(walk_files(root_fd)) == []
    assert list_directory(root_fd) == [DirectoryEntry(name="zero", kind=EntryKind.OTHER, size=0)]


# --- reading, writing, listing ----------------------------------------------------------------------


def test_read_replace_create_and_list(root: Path, root_fd: int) -> None:
    replace_file(root_fd, "a/b/c.txt", b"hello")
    assert (root / "a" / "b" / "c.txt").read_bytes() == b"hello"
    replace_file(root_fd, "a/b/c.txt", b"again")
    assert read_bytes(root_fd, "a/b/c.txt") == b"again"
    assert read_bytes(root_fd, "./a//b/c.txt", max_bytes=2) == b"ag"
    assert read_bytes(root_fd, "a/b/c.txt", max_bytes=0) == b""
    assert sorted(p.name for p in (root / "a" / "b").iterdir()) == ["c.txt"]
    fd = open_file(root_fd, "a/new.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        os.write(fd, b"12")
        assert os.get_blocking(fd)  # back in blocking mode for the caller
        assert os.get_inheritable(fd) is False
    finally:
        os.close(fd)
    os.mkfifo(root / "a" / "pipe")
    (root / "a" / "link").symlink_to("new.txt")
    assert list_directory(root_fd, "a") == [
        DirectoryEntry(name="b", kind=EntryKind.DIRECTORY, size=(root / "a" / "b").lstat().st_size),
        DirectoryEntry(name="link", kind=EntryKind.SYMLINK, size=len("new.txt")),
        DirectoryEntry(name="new.txt", kind=EntryKind.FILE, size=2),
        DirectoryEntry(name="pipe", kind=EntryKind.OTHER, size=0),
    ]
    fd = open_directory(root_fd, "x/y", create=True)
    os.close(fd)
    assert (root / "x" / "y").is_dir()


def test_replace_file_replaces_a_symlink_instead_of_writing_through_it(
    root: Path, root_fd: int, bait: Path, outside: Path
) -> None:
    (root / "target").symlink_to(bait / "secret.txt")
    replace_file(root_fd, "target", b"new")
    assert not (root / "target").is_symlink() and (root / "target").read_bytes() == b"new"
    os.mkfifo(root / "pipe")
    in_thread_with_guard(lambda: replace_file(root_fd, "pipe", b"new"))
    assert (root / "pipe").read_bytes() == b"new"
    untouched(outside, bait)


def test_walk_files_is_depth_first_sorted_and_skips_what_is_not_a_regular_file(root: Path, root_fd: int) -> None:
    for path in ("b.txt", "a/z.txt", "a/inner/y.txt", "c/x.txt", ".git/config", "a/.git/HEAD"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("1234")
    os.mkfifo(root / "a" / "pipe")
    (root / "a" / "link.txt").symlink_to("z.txt")
    (root / "dir-link").symlink_to(root / "c")
    found = list(walk_files(root_fd, skip_directories={".git"}))
    assert [f.path for f in found] == ["b.txt", "a/z.txt", "a/inner/y.txt", "c/x.txt"]
    assert found[0] == WorkspaceFile(path="b.txt", size=4)
    assert [f.path for f in walk_files(root_fd, "a", skip_directories={".git"})] == ["a/z.txt", "a/inner/y.txt"]
    with pytest.raises(SymlinkRefused):
        list(walk_files(root_fd, "dir-link"))
    with pytest.raises(PathNotFound):
        list(walk_files(root_fd, "nope"))


def test_the_root_must_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectory), workspace_root(tmp_path / "file"):
        pass
    with pytest.raises(PathNotFound), workspace_root(tmp_path / "missing"):
        pass


# --- races --------------------------------------------------------------------------------------------


def test_reads_never_come_from_a_directory_swapped_out_of_the_root(
    root: Path, root_fd: int, bait: Path, outside: Path
) -> None:
    (root / "d").mkdir()
    (root / "d" / "secret.txt").write_bytes(b"inside\n")
    (root / "swap").symlink_to(bait)
    seen: list[bytes] = []
    with swapping(root / "d", root / "swap") as swaps:
        for _ in range(ROUNDS):
            with contextlib.suppress(SymlinkRefused):
                seen.append(read_bytes(root_fd, "d/secret.txt"))
            seen.extend(f.path.encode() for f in walk_files(root_fd))
    assert swaps[0] > 0
    assert BAIT not in seen
    untouched(outside, bait)
    if (root / "d").is_symlink():
        exchange(root / "d", root / "swap")
    assert read_bytes(root_fd, "d/secret.txt") == b"inside\n"


def test_writes_never_land_in_a_directory_swapped_out_of_the_root(
    root: Path, root_fd: int, bait: Path, outside: Path
) -> None:
    (root / "d").mkdir()
    (root / "swap").symlink_to(outside)
    written: list[str] = []
    with swapping(root / "d", root / "swap") as swaps:
        for number in range(ROUNDS):
            try:
                replace_file(root_fd, f"d/f{number}", b"x")
                written.append(f"f{number}")
                os.close(open_directory(root_fd, f"d/sub{number}", create=True))
                written.append(f"sub{number}")
            except SymlinkRefused:
                pass
    assert swaps[0] > 0
    untouched(outside, bait)
    real = root / "d" if not (root / "d").is_symlink() else root / "swap"
    assert sorted(os.listdir(real)) == sorted(written)
    if (root / "d").is_symlink():
        exchange(root / "d", root / "swap")
    replace_file(root_fd, "d/after", b"x")
    assert (root / "d" / "after").read_bytes() == b"x"
    untouched(outside, bait)


# --- bounded work ---------------------------------------------------------------------------------------


def _chain(root: Path, depth: int, files_at: tuple[int, ...]) -> None:
    """``d/d/.../d`` ``depth`` levels deep under ``root``, with ``f<level>`` at each level in ``files_at``."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(1, depth + 1):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
            if level in files_at:
                os.close(os.open(f"f{level}", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def test_walk_files_opens_each_directory_once_and_stops_at_the_depth_limit(
    root: Path, root_fd: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A program nests directories far deeper than any project at almost no cost: a walk that reopened each
    # directory from the root did depth² opens (minutes of a host thread for a chain made in a second).
    limit = workspace_files._MAX_WALK_DEPTH
    _chain(root, limit + 50, files_at=(3, limit, limit + 1, limit + 50))
    opens = 0
    real_open = os.open

    def counting(*args: object, **kwargs: object) -> int:
        nonlocal opens
        opens += 1
        return real_open(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting)
    found = [f.path.count("/") for f in walk_files(root_fd)]
    monkeypatch.undo()
    assert found == [3, limit]  # f<n> sits n directories down; deeper than the limit is not entered
    assert opens <= limit + 2


def test_walk_files_closes_its_descriptors_when_left_early(root: Path, root_fd: int) -> None:
    _chain(root, 20, files_at=tuple(range(1, 21)))
    before = len(os.listdir("/proc/self/fd"))
    walk = walk_files(root_fd)
    assert next(walk).path == "d/f1"
    assert next(walk).path == "d/d/f2"
    walk.close()
    assert len(os.listdir("/proc/self/fd")) == before


def test_replace_file_takes_any_name_the_system_takes(root: Path, root_fd: int) -> None:
    # The temporary file's name is derived from the target's; 63 four-byte characters (252 bytes) are a
    # valid name whose temporary name, cut at 64 characters rather than bytes, was too long.
    name = "\N{GRINNING FACE}" * 63
    replace_file(root_fd, name, b"x")
    assert [p.name for p in root.iterdir()] == [name] and (root / name).read_bytes() == b"x"
