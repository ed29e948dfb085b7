"""The demo model's words come from the tool results, never from the script."""

from __future__ import annotations

from typing import Any

import orjson

from ptc_plus.demo.scripted_model import Facts, answer, fill, read_facts, units_answer


def _exchange(tool: str, arguments: dict[str, Any], result: object) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": tool, "arguments": arguments}]},
        {"role": "tool", "tool_call_id": "c1", "content": orjson.dumps(result).decode()},
    ]


def test_facts_come_from_the_results_of_the_named_tools() -> None:
    messages = [
        *_exchange("search_files", {"query": "TODO"}, {"matches": [{"path": "a.md", "line": 2, "text": "TODO: x"}]}),
        *_exchange(
            "search_files", {"query": "river loop"}, {"matches": [{"path": "r.md", "line": 1, "text": "is 5 miles"}]}
        ),
        *_exchange("convert_units", {}, {"unit": "km", "value": 8.04672}),
        *_exchange("notes_add", {}, {"id": 7}),
    ]
    assert read_facts(messages) == Facts(todos=("a.md:2 TODO: x",), miles=5.0, source="r.md", km=8.04672, note_id=7)


def test_a_failed_call_reports_no_fact() -> None:
    assert read_facts(_exchange("convert_units", {}, "unknown unit")) == Facts()
    messages = _exchange("notes_add", {}, {"id": 1})
    messages[-1]["content"] = "Tool notes_add failed: locked"
    assert read_facts(messages) == Facts()


def test_the_answer_claims_nothing_the_tools_did_not_say() -> None:
    text = answer(Facts(), "en")
    assert "note" not in text and "km" not in text
    assert text == " ".join(
        [
            "The TODO search returned nothing I could read.",
            "I found no length for the river loop in the docs, so I converted nothing.",
        ]
    )
    assert answer(Facts(todos=()), "en").startswith("The search found no TODO lines")
    assert "failed" in answer(Facts(todos=(), miles=3.0, source="r.md"), "en")


def test_the_follow_up_answer_gives_the_converter_s_numbers_or_says_it_failed() -> None:
    messages = [
        *_exchange(
            "search_files", {"query": "river loop"}, {"matches": [{"path": "r.md", "line": 1, "text": "is 5 miles"}]}
        ),
        *_exchange("convert_units", {}, {"unit": "m", "value": 8046.72}),
    ]
    facts = read_facts(messages)
    assert facts.metres == 8046.72 and facts.feet is None
    assert (
        units_answer(facts, "en") == "r.md gives the river loop as 5 miles; the conversion to metres and feet failed."
    )
    facts = read_facts([*messages, *_exchange("convert_units", {}, {"unit": "ft", "value": 26400.0})])
    assert units_answer(facts, "en") == "r.md gives the river loop as 5 miles: 8046.72 m, or 26400 ft."
    assert units_answer(Facts(), "en") == "I found no length for the river loop in the docs, so I converted nothing."


def test_a_program_gets_the_fact_as_a_python_literal() -> None:
    code = {"code": "miles = {river_miles}\nreturn miles"}
    assert fill(code, Facts(miles=13.1)) == {"code": "miles = 13.1\nreturn miles"}
    assert fill(code, Facts()) == {"code": "miles = None\nreturn miles"}
    assert fill({"value": "{river_miles}"}, Facts(miles=2.0)) == {"value": 2.0}  # a whole argument keeps its type
