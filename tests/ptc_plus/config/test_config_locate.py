"""Where keys are written: headers, dotted keys, quoted keys, and text that only looks like a key."""

from __future__ import annotations

import tomllib

from ptc_plus.config.locate import Position, key_positions, locate, syntax_position

TEXT = '''version = 1  # [not] = a header
s = """
[fake]
x = 1 \\"""
"""
l = \'\'\'
[fake2]\'\'\'
arr = [
  "a]", # ]
  {k = "{"},
]
[runtime]
timeout_s = 5
[capabilities."mcp:git/log"]
  disclosure = "full"
[capabilities]
"a.b" = { disclosure = "off" }
management.enabled = true
'''


def test_positions_of_headers_and_keys() -> None:
    tomllib.loads(TEXT)  # the scanner only ever sees valid TOML
    found = key_positions(TEXT)
    assert found[("version",)] == Position(1, 1)
    assert found[("runtime",)] == Position(12, 1)
    assert found[("runtime", "timeout_s")] == Position(13, 1)
    assert found[("capabilities", "mcp:git/log", "disclosure")] == Position(15, 3)
    assert found[("capabilities", "a.b")] == Position(17, 1)
    assert found[("capabilities", "management", "enabled")] == Position(18, 1)
    assert ("fake",) not in found and ("fake2",) not in found and ("not",) not in found


def test_locate_falls_back_to_the_nearest_written_ancestor() -> None:
    found = key_positions(TEXT)
    assert locate(found, 'capabilities."a.b".disclosure') == Position(17, 1)
    assert locate(found, "arr[1]") == Position(8, 1)
    assert locate(found, "nowhere.at.all") is None


def test_syntax_position_moves_tomllibs_tail_into_a_position() -> None:
    try:
        tomllib.loads("a = 1\n[b\n")
    except tomllib.TOMLDecodeError as exc:
        detail, where = syntax_position(str(exc))
    assert where == Position(2, 3) and "(at line" not in detail
