"""``ptc-plus --help`` printed without click equals click's own rendering (issue 32, ADR 0123).

The fast text is laid out from the lazy group's table (:data:`ptc_plus.cli.COMMANDS` and the commands'
help messages); these tests compare it with what click prints for the same group, in both locales, at
widths from below click's minimum to above the group's ``max_content_width``, so the two cannot drift.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from ptc_plus.cli import main
from ptc_plus.cli.click_words import localized_click
from ptc_plus.cli.fast_help import top_level_help
from ptc_plus.cli.lazy_group import root

WIDTHS = (20, 49, 50, 52, 60, 79, 80, 81, 100, 101, 102, 140, 300)


def _click_help(capsys: pytest.CaptureFixture[str]) -> str:
    """What click itself prints for ``ptc-plus --help`` (the lazy group, as before the fast path)."""
    with localized_click(), pytest.raises(SystemExit) as done:
        root().main(args=["--help"], prog_name="ptc-plus")
    assert done.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("columns", WIDTHS)
def test_the_fast_help_is_clicks_text(
    lang: str, columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PTC_LOCALE", lang)
    monkeypatch.setenv("COLUMNS", str(columns))
    fast = top_level_help()
    assert fast is not None  # every width here is one the fast path covers: the comparison is never skipped
    assert fast + "\n" == _click_help(capsys)


@pytest.mark.parametrize("argv", [["--help"], ["-h"]])
def test_main_prints_clicks_text(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed == _click_help(capsys)


def test_a_text_the_layout_does_not_cover_falls_back_to_click(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A help message with a paragraph break is click's to render: the fast path declines, main still prints it."""
    import ptc_plus.cli.fast_help as fast_help

    real = fast_help.message
    monkeypatch.setattr(fast_help, "message", lambda key: real(key) + ("\n\nmore" if key == "cli.help" else ""))
    assert top_level_help() is None
    assert main(["--help"]) == 0
    assert capsys.readouterr().out == _click_help(capsys)


def test_help_imports_no_click() -> None:
    """The import-graph check: a bare top-level ``--help`` or ``-h`` loads neither click nor attrs."""
    probe = "import sys\nfrom ptc_plus.cli import main\ncode = main(sys.argv[1:])\nsys.stdout.flush()\n"
    probe += (
        "sys.stderr.write(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'attrs', 'attr'))))\n"
    )
    for flag in ("--help", "-h"):
        done = subprocess.run(
            [sys.executable, "-c", probe, flag], capture_output=True, text=True, timeout=600, check=True
        )
        assert done.stdout.startswith("Usage: ") or done.stdout.startswith("用法")
        assert done.stderr == ""
