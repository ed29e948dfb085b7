"""The directory store of a session's journal: whole lines under concurrent writers, damage read as
unreadable items, symlinks refused, one invocation per session (ADR 0081)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from ptc_plus.errors import PtcError
from ptc_plus.i18n import load_catalog
from ptc_plus.runtime.kernel import errors
from ptc_plus.runtime.kernel.journal import Deleted, Journal, encode
from ptc_plus.runtime.kernel.store import JOURNAL, DirectoryStore, JournalStore, Unreadable

ROOT = Path(__file__).resolve().parents[4]


def _python(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_directory_store_is_a_journal_store(tmp_path: Path) -> None:
    store: JournalStore = DirectoryStore(tmp_path / "s")
    assert store.read() == []


def test_records_come_back_in_order_and_the_files_are_private(tmp_path: Path) -> None:
    session = tmp_path / "new" / "session"
    store = DirectoryStore(session)
    assert stat.S_IMODE(session.stat().st_mode) == 0o700
    records = [encode(Deleted(name=f"n{index}")) for index in range(3)]
    for record in records:
        store.append(record)
    assert store.read() == records
    assert stat.S_IMODE((session / JOURNAL).stat().st_mode) == 0o600
    raw = (session / JOURNAL).read_bytes()
    assert raw.count(b"\n") == 3 and raw.endswith(b"\n")


def test_an_existing_directory_is_used_as_it_is(tmp_path: Path) -> None:
    (tmp_path / JOURNAL).write_bytes(b'{"v": 1, "type": "deleted", "name": "x"}\n')
    assert DirectoryStore(tmp_path).read() == [{"v": 1, "type": "deleted", "name": "x"}]


def test_a_torn_last_line_is_unreadable_and_the_next_record_starts_on_a_fresh_line(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.append({"n": 1})
    with open(tmp_path / JOURNAL, "ab") as journal:
        journal.write(b'{"n": 2, "tor')
    items = store.read()
    assert items[0] == {"n": 1}
    assert isinstance(items[1], Unreadable) and "torn" in items[1].reason
    store.append({"n": 3})
    items = store.read()
    assert len(items) == 3
    assert items[0] == {"n": 1} and isinstance(items[1], Unreadable) and items[2] == {"n": 3}


def test_a_complete_looking_last_line_without_its_line_end_is_still_torn(tmp_path: Path) -> None:
    (tmp_path / JOURNAL).write_bytes(b'{"n": 1}\n{"n": 2}')
    items = DirectoryStore(tmp_path).read()
    assert items[0] == {"n": 1}
    assert isinstance(items[1], Unreadable)


def test_garbage_lines_in_the_middle_are_unreadable_and_reading_goes_on(tmp_path: Path) -> None:
    (tmp_path / JOURNAL).write_bytes(b'{"n": 1}\nnot json at all\n\n[1, 2]\n\xff\xfe\n{"n": 2}\n')
    items = DirectoryStore(tmp_path).read()
    assert items[0] == {"n": 1} and items[-1] == {"n": 2}
    assert [type(item) for item in items[1:-1]] == [Unreadable] * 4
    assert [item.reason.split(" is ")[0] for item in items[1:-1] if isinstance(item, Unreadable)] == [
        "line 2",
        "line 3",
        "line 4",
        "line 5",
    ]


def test_a_damaged_journal_file_loads_with_its_damage_counted(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.append(encode(Deleted(name="a")))
    with open(tmp_path / JOURNAL, "ab") as journal:
        journal.write(b"garbage\n")
    store.append(encode(Deleted(name="b")))
    store.append({**encode(Deleted(name="c")), "extra": 1})
    journal_view = Journal.load(store.read())
    assert len(journal_view.invalid) == 2
    assert journal_view.invalid[0].startswith("line 2:")
    assert journal_view.invalid[1].startswith("line 4:")


def test_two_processes_appending_at_once_write_whole_lines_only(tmp_path: Path) -> None:
    writer = """
        import sys
        from ptc_plus.runtime.kernel.store import DirectoryStore
        store = DirectoryStore(sys.argv[1])
        sys.stdin.readline()  # start together
        payload = sys.argv[2] * 50_000  # larger than a pipe buffer: a split write would show
        for index in range(40):
            store.append({"writer": sys.argv[2], "index": index, "payload": payload})
    """
    writers = [_python(writer, str(tmp_path), name) for name in ("a", "b")]
    for process in writers:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    for process in writers:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
    lines = (tmp_path / JOURNAL).read_bytes().split(b"\n")
    assert lines.pop() == b""
    records = [orjson.loads(line) for line in lines]
    for name in ("a", "b"):
        mine = [record for record in records if record["writer"] == name]
        assert [record["index"] for record in mine] == list(range(40))
        assert all(record["payload"] == name * 50_000 for record in mine)


def test_a_symlinked_session_directory_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(errors.SessionDirRefused) as caught:
        DirectoryStore(link)
    assert caught.value.code == "PTC-R010"
    assert list(real.iterdir()) == []


def test_a_dangling_symlink_is_refused_not_followed(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(errors.SessionDirRefused):
        DirectoryStore(link)
    assert not (tmp_path / "elsewhere").exists()


def test_a_file_is_not_a_session_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(errors.SessionDirRefused):
        DirectoryStore(tmp_path / "file")


def test_a_directory_swapped_for_a_symlink_later_is_refused(tmp_path: Path) -> None:
    session = tmp_path / "s"
    store = DirectoryStore(session)
    session.rmdir()
    other = tmp_path / "other"
    other.mkdir()
    session.symlink_to(other)
    with pytest.raises(errors.SessionDirRefused):
        store.append({"n": 1})
    with pytest.raises(errors.SessionDirRefused):
        store.read()
    assert list(other.iterdir()) == []


def test_a_symlinked_journal_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("precious\n")
    session = tmp_path / "s"
    store = DirectoryStore(session)
    (session / JOURNAL).symlink_to(target)
    with pytest.raises(errors.SessionFileRefused) as caught:
        store.append({"n": 1})
    assert caught.value.code == "PTC-R014"
    with pytest.raises(errors.SessionFileRefused):
        store.read()
    assert target.read_text() == "precious\n"


def test_a_fifo_in_place_of_the_journal_is_refused_without_hanging(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    os.mkfifo(tmp_path / JOURNAL)
    with pytest.raises(errors.SessionFileRefused):
        store.read()
    with pytest.raises((errors.SessionFileRefused, errors.JournalWriteFailed)):
        store.append({"n": 1})


def test_a_journal_that_cannot_be_written_is_a_typed_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    store = DirectoryStore(tmp_path)
    store.append({"n": 1})
    (tmp_path / JOURNAL).chmod(0o400)
    with pytest.raises(errors.JournalWriteFailed) as caught:
        store.append({"n": 2})
    assert caught.value.code == "PTC-R013"


def test_a_session_held_by_another_process_is_busy(tmp_path: Path) -> None:
    holder = _python(
        """
        import sys
        from ptc_plus.runtime.kernel.store import DirectoryStore
        with DirectoryStore(sys.argv[1]).exclusive(timeout=5):
            print("held", flush=True)
            sys.stdin.readline()
        """,
        str(tmp_path),
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        store = DirectoryStore(tmp_path)
        with pytest.raises(errors.SessionBusy) as caught, store.exclusive(timeout=0):
            pass
        assert caught.value.code == "PTC-R011"
        assert str(tmp_path) in caught.value.message("en")
        store.append({"n": 1})  # the session lock does not block the journal lock
    finally:
        holder.stdin.write("done\n")
        holder.stdin.flush()
        holder.communicate(timeout=30)
    assert holder.returncode == 0
    with DirectoryStore(tmp_path).exclusive(timeout=5):
        pass


def test_a_session_is_released_when_the_holder_raises(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    with pytest.raises(RuntimeError), store.exclusive(timeout=0):
        raise RuntimeError("boom")
    checker = _python(
        """
        import sys
        from ptc_plus.runtime.kernel.store import DirectoryStore
        with DirectoryStore(sys.argv[1]).exclusive(timeout=0):
            print("ok")
        """,
        str(tmp_path),
    )
    stdout, stderr = checker.communicate(timeout=60)
    assert stdout.strip() == "ok", stderr


ERRORS = [errors.SessionDirRefused, errors.SessionBusy, errors.JournalReadFailed, errors.JournalWriteFailed]
ERRORS.append(errors.SessionFileRefused)


@pytest.mark.parametrize("error", ERRORS, ids=lambda error: error.__name__)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_kernel_error_is_a_ptc_error_with_a_message_in_both_locales(error: type[PtcError], lang: str) -> None:
    assert issubclass(error, PtcError)
    assert error.code.startswith("PTC-R01")
    text = load_catalog(lang)[f"error.{error.code}"]
    rendered = error(path="/p", timeout=1, detail="d").message(lang)
    assert "/p" in rendered and "{" not in rendered
    assert text


def test_a_journal_over_the_cap_is_set_aside_unread(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "s", max_bytes=1000)
    for index in range(40):
        store.append({"v": 1, "type": "deleted", "name": f"name-{index}"})
    with pytest.raises(errors.JournalTooLarge) as raised:
        store.read()
    assert raised.value.code == "PTC-R016" and raised.value.params["limit"] == 1000
    assert (tmp_path / "s" / "journal.oversized.jsonl").stat().st_size > 1000
    assert store.read() == []  # the next read meets a fresh journal, not the same damage
    store.append({"v": 1, "type": "deleted", "name": "after"})
    assert store.read() == [{"v": 1, "type": "deleted", "name": "after"}]
