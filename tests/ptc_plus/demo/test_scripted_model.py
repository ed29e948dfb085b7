"""The demo model's words come from the tool results, never from the script."""

from __future__ import annotations

from typing import Any

import orjson

from ptc_plus.demo.scripted_model import Facts, answer, read_facts


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
