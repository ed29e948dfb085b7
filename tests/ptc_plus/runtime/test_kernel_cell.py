"""Compiling kernel cells, and the names a cell binds and references (``worker/cell.py``)."""

from __future__ import annotations

import asyncio
import builtins
from typing import Any

import pytest

from ptc_plus.runtime.worker import cell, program


def _run_cells(*sources: str) -> tuple[list[Any], dict[str, Any]]:
    namespace: dict[str, Any] = {"__builtins__": builtins}
    values = []
    for source in sources:
        exec(cell.compile_cell(source), namespace)
        values.append(asyncio.run(namespace[program.ENTRY]()))
    return values, namespace


def test_top_level_names_land_in_the_namespace_and_locals_do_not() -> None:
    values, namespace = _run_cells(
        "import os.path, json as j\nfrom collections import deque as dq\n"
        "a, (b, c) = 1, (2, 3)\nfor i in range(2):\n    pass\n"
        "def f(q=(w := 5)):\n    inner = 1\n    return q\n"
        "class K:\n    field: int = 3\n"
        "total = sum([k for k in range(3) if (last := k)])\n"
        "try:\n    1 / 0\nexcept ZeroDivisionError as error:\n    caught = str(error)\n"
        "match {'m': 1}:\n    case {'m': m, **rest}:\n        pass\n"
        "x: int = 7\ny: int\n",
        "del c\n[a + b, f(), K.field, K.__annotations__ == {'field': int}, last, x, m, rest, j.dumps(1), dq, i]",
    )
    assert values[0] is None
    assert values[1][:10] == [3, 5, 3, True, 2, 7, 1, {}, "1", namespace["dq"]]
    names = {name for name in namespace if not name.startswith("__")}
    expected = {"os", "j", "dq", "a", "b", "i", "f", "w", "K", "total", "last", "caught", "m", "rest", "x"}
    assert names == expected
    assert "error" not in namespace and "inner" not in namespace and "k" not in namespace


def test_nonlocal_of_a_cell_name_still_works() -> None:
    values, _ = _run_cells(
        "n = 1\ndef bump():\n    nonlocal n\n    n += 1\n    return n\nclass C:\n    def m(self):\n"
        "        nonlocal n\n        n += 10\n        return n\n[bump(), C().m()]",
        "n",
    )
    assert values == [[2, 12], 12]


def test_return_and_await_work_and_functions_see_later_globals() -> None:
    values, _ = _run_cells(
        "import asyncio\nasync def g():\n    return helper()\nawait asyncio.sleep(0)\nif True:\n    return 1\n",
        "def helper():\n    return 'late'\nawait g()",
    )
    assert values == [1, "late"]


def test_tracebacks_use_the_cells_lines() -> None:
    source = "a = 1\nb = 0\na / b\n"
    namespace: dict[str, Any] = {"__builtins__": builtins}
    exec(cell.compile_cell(source), namespace)
    with pytest.raises(ZeroDivisionError) as raised:
        asyncio.run(namespace[program.ENTRY]())
    summary = program.error_summary(raised.value, 10_000)
    assert 'File "<program>", line 3, in <module>\n    a / b\n' in str(summary["traceback"])


def test_bound_and_referenced_names() -> None:
    source = (
        "import a.b\nfrom c import d as e\nx = y + z.w\nasync def f(p):\n    q = p\n    return r\n"
        "class G(Base):\n    h = 1\nfor i, j in items:\n    pass\nwith open(path) as fh:\n    pass\n"
        "lst = [k for k in range(3) if (got := k)]\nlam = lambda u: u + v\ndel old\n"
    )
    assert cell.bound_names(source) == frozenset({"a", "e", "x", "f", "G", "i", "j", "fh", "lst", "got", "lam", "old"})
    referenced = cell.referenced_names(source)
    assert {
        "y",
        "z",
        "r",
        "Base",
        "items",
        "open",
        "path",
        "range",
        "v",
        "p",
        "q",
        "old",
        "f",
        "G",
        "a",
        "e",
    } <= referenced
    assert "w" not in referenced  # an attribute, not a name


def test_bad_source_raises_syntax_error() -> None:
    for function in (cell.compile_cell, cell.bound_names, cell.referenced_names):
        with pytest.raises(SyntaxError):
            function("x = = 1")
