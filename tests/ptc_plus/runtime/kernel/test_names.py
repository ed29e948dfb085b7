"""Provenance's name rules: what a cell binds and reads, and what a hidden cell taints."""

from __future__ import annotations

from ptc_plus.runtime.kernel.names import CellNames, PathCell, cell_names, tainted


def test_bound_and_loaded_names_of_a_cell() -> None:
    names = cell_names("x = 1\nimport json as j\ndef f(a):\n    return a + y\nz = f(x)\n")
    assert names.bound == {"x", "j", "f", "z"}
    assert {"x", "f", "y"} <= names.loaded
    assert "z" not in names.loaded


def test_a_cell_that_does_not_parse_has_no_names() -> None:
    assert cell_names("def (:") == CellNames(bound=frozenset(), loaded=frozenset())


def _cell(source: str, hidden: bool = False) -> PathCell:
    return PathCell(hidden=hidden, names=cell_names(source))


def test_hidden_cell_taints_what_it_bound_and_read_and_dependents_follow() -> None:
    path = [
        _cell("data = [1, 2]"),
        _cell("x = 1\ndata.append(3)", hidden=True),
        _cell("y = x + 1"),
        _cell("w = 5"),
    ]
    # x: declared by the hidden cell; data: it may have mutated it; y: computed from x.
    assert {"x", "data", "y"} <= tainted(path)
    assert "w" not in tainted(path)


def test_rebinding_a_tainted_name_without_reading_one_makes_it_clean() -> None:
    path = [_cell("x = 1", hidden=True), _cell("x = 2")]
    assert "x" not in tainted(path)
    path = [_cell("x = 1", hidden=True), _cell("x = x + 1")]
    assert "x" in tainted(path)


def test_nothing_hidden_nothing_tainted() -> None:
    assert tainted([_cell("x = 1"), _cell("y = x")]) == frozenset()
