"""The demo's model: a fixed script of tool calls whose facts come from the tool results.

No language model is called. The script (``ptc.jsonl``, ``native.jsonl``)
fixes which tools are called; what the model *says* must never contradict
what those tools found, so every fact is read from the tool results it was
sent: a scripted argument written ``"{fact}"`` takes the fact's value (inside
a longer string, such as a program, its Python literal), and the final
answer is written from the facts (``demo.answer.*``). A scripted final turn's
``text`` names which answer: ``""`` the first question's, ``"units"`` the
follow-up's (the river loop in metres and feet).
"""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import orjson

from hookspecs.reference import AssistantTurn, ModelRequest, ScriptedModel
from ptc_plus.i18n import message

_MILES = re.compile(r"(\d+(?:\.\d+)?) miles")


@attrs.frozen(kw_only=True)
class Facts:
    """What the tools reported so far; ``None`` where no tool said.

    :ivar todos: the TODO lines found, as ``path:line text``.
    :ivar miles: the river loop's length as the docs give it, and ``source`` the file that says so.
    :ivar km: the converted length; ``metres`` and ``feet`` the follow-up's conversions.
    :ivar note_id: the note saved.
    """

    todos: tuple[str, ...] | None = None
    miles: float | None = None
    source: str = ""
    km: float | None = None
    metres: float | None = None
    feet: float | None = None
    note_id: int | None = None


def read_facts(messages: Iterable[Mapping[str, Any]]) -> Facts:
    """The facts in the tool results of ``messages`` (chat roles), later results over earlier ones."""
    calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
    facts = Facts()
    for entry in messages:
        if entry.get("role") == "assistant":
            for call in entry.get("tool_calls") or ():
                calls[str(call.get("id"))] = (str(call.get("name")), call.get("arguments") or {})
        elif entry.get("role") == "tool":
            name, arguments = calls.get(str(entry.get("tool_call_id")), ("", {}))
            try:
                value = orjson.loads(entry.get("content") or "")
            except orjson.JSONDecodeError:
                continue  # a failure's text: it reports no fact
            if isinstance(value, dict):
                facts = _learn(facts, name, arguments, value)
    return facts


def _learn(facts: Facts, tool: str, arguments: Mapping[str, Any], value: dict[str, Any]) -> Facts:
    if tool == "run_code":
        result = value.get("value")
        if not isinstance(result, dict):
            return facts
        return attrs.evolve(
            facts,
            todos=tuple(map(str, result["todos"])) if isinstance(result.get("todos"), list) else facts.todos,
            miles=_number(result.get("river_loop_miles"), facts.miles),
            source=str(result.get("river_loop_source") or facts.source),
            km=_number(result.get("river_loop_km"), facts.km),
            metres=_number(result.get("river_loop_m"), facts.metres),
            feet=_number(result.get("river_loop_ft"), facts.feet),
            note_id=_integer(result.get("note_id"), facts.note_id),
        )
    if tool == "search_files" and isinstance(value.get("matches"), list):
        matches = [m for m in value["matches"] if isinstance(m, dict)]
        if arguments.get("query") == "TODO":
            return attrs.evolve(facts, todos=tuple(f"{m.get('path')}:{m.get('line')} {m.get('text')}" for m in matches))
        for match in matches:
            found = _MILES.search(str(match.get("text", "")))
            if found:
                return attrs.evolve(facts, miles=float(found.group(1)), source=str(match.get("path", "")))
        return facts
    if tool == "convert_units":
        converted = value.get("value")
        unit = value.get("unit")
        if unit == "km":
            return attrs.evolve(facts, km=_number(converted, facts.km))
        if unit == "m":
            return attrs.evolve(facts, metres=_number(converted, facts.metres))
        if unit == "ft":
            return attrs.evolve(facts, feet=_number(converted, facts.feet))
    if tool == "notes_add":
        return attrs.evolve(facts, note_id=_integer(value.get("id"), facts.note_id))
    return facts


def _number(value: object, default: float | None) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def _integer(value: object, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def answer(facts: Facts, lang: str | None = None) -> str:
    """The final answer: only what the facts say, and plainly what no tool reported."""
    parts = []
    if facts.todos is None:
        parts.append(message("demo.answer.no-search", lang))
    elif not facts.todos:
        parts.append(message("demo.answer.no-todos", lang))
    else:
        where = "; ".join(todo.rstrip(".") for todo in facts.todos)
        key = "demo.answer.todo" if len(facts.todos) == 1 else "demo.answer.todos"
        parts.append(message(key, lang, count=len(facts.todos), where=where))
    if facts.note_id is not None:
        parts.append(message("demo.answer.note", lang, id=facts.note_id))
    if facts.miles is None:
        parts.append(message("demo.answer.no-distance", lang))
    elif facts.km is None:
        parts.append(message("demo.answer.no-conversion", lang, miles=f"{facts.miles:g}", source=facts.source))
    else:
        parts.append(
            message("demo.answer.distance", lang, miles=f"{facts.miles:g}", source=facts.source, km=f"{facts.km:.2f}")
        )
    return " ".join(parts)


def units_answer(facts: Facts, lang: str | None = None) -> str:
    """The follow-up's answer: the river loop in metres and feet, as the converter returned them."""
    if facts.miles is None:
        return message("demo.answer.no-distance", lang)
    if facts.metres is None or facts.feet is None:
        return message("demo.answer.no-units", lang, miles=f"{facts.miles:g}", source=facts.source)
    return message(
        "demo.answer.units",
        lang,
        miles=f"{facts.miles:g}",
        source=facts.source,
        metres=f"{round(facts.metres, 2):.10g}",
        feet=f"{round(facts.feet, 2):.10g}",
    )


ANSWERS = {"": answer, "units": units_answer}
"""The final answers a script may name in its final turn's ``text``."""


def fill(value: Any, facts: Facts) -> Any:
    """A scripted argument with each ``"{fact}"`` string replaced by what the tools reported.

    Inside a longer string (a program) the fact becomes its Python literal (``None`` when no tool said).
    """
    if isinstance(value, dict):
        return {key: fill(item, facts) for key, item in value.items()}
    if isinstance(value, list):
        return [fill(item, facts) for item in value]
    if value == "{todo_lines}":
        return "\n".join(facts.todos or ())
    if value == "{river_miles}":
        return facts.miles
    if isinstance(value, str):
        return value.replace("{river_miles}", repr(facts.miles))
    return value


class DemoModel:
    """Replays a demo script; fills its arguments and writes its final answer from the tool results."""

    route = "scripted"

    def __init__(self, script: ScriptedModel) -> None:
        self._script = script

    @classmethod
    def named(cls, name: str) -> DemoModel:
        """The model of the script ``name`` shipped in this package."""
        path = Path(str(importlib.resources.files("ptc_plus.demo").joinpath(name)))
        return cls(ScriptedModel.from_jsonl(path))

    @property
    def requests(self) -> list[ModelRequest]:
        return self._script.requests

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        turn = await self._script.complete(request)
        facts = read_facts(request.messages)
        if not turn.tool_calls:
            return AssistantTurn(text=ANSWERS[turn.text](facts))
        calls = tuple(attrs.evolve(c, arguments=fill(c.arguments, facts)) for c in turn.tool_calls)
        return AssistantTurn(text=turn.text, tool_calls=calls)
