"""t12 — changes state: one note per action item of the minutes; the oracle reads the notes store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive

from .oracles import amounts, has_number, notes_in, only, verdict

MINUTES = "meeting/minutes.md"
PROMPT = (
    f"Read {MINUTES} and add one note per action item (the lines starting with 'ACTION:'): the note's title is "
    "the action, its body names the owner, and it is tagged 'action'. How many notes did you add?"
)
_ACTIONS = (
    ("Update the pricing page for the winter sale", "Clara"),
    ("Call the Rotterdam warehouse about late pallets", "Jonas"),
    ("Draft the Q1 hiring plan", "Ines"),
    ("Fix the VAT rounding in invoices", "Hugo"),
    ("Send the survey results to the board", "Greta"),
    ("Review the returns policy with legal", "Luca"),
)


def setup(workspace: Path, world: Any) -> None:
    lines = ["# Weekly sync, 2026-11-23", "", "Attendees: Clara, Jonas, Ines, Hugo, Greta, Luca", ""]
    for number, (action, owner) in enumerate(_ACTIONS):
        lines += [f"## Topic {number + 1}", f"We discussed {action.lower()}.", f"ACTION: {action} (owner: {owner})", ""]
    lines.append("Next meeting: 2026-11-30. No ACTION items were carried over from last week.")
    (workspace / "meeting").mkdir(exist_ok=True)
    (workspace / MINUTES).write_text("\n".join(lines) + "\n", encoding="utf-8")


def action_items(lines: list[str]) -> list[tuple[str, str]]:
    """``(action, owner)`` of each line that starts with ``ACTION:``."""
    items = []
    for line in lines:
        if line.startswith("ACTION:"):
            action, _, owner = line.removeprefix("ACTION:").strip().rpartition(" (owner: ")
            items.append((action, owner.rstrip(")")))
    return items


def _answer(count: int) -> Answer:
    return Answer(text=f"I added {count} notes tagged 'action', one per action item.")


def oracle(answer: str, end: EndState) -> Verdict:
    expected = action_items((end.workspace / MINUTES).read_text(encoding="utf-8").splitlines())
    tagged = [(title, body) for title, body, tags in notes_in(end.workspace) if "action" in tags]
    missing = [action for action, owner in expected if not any(t == action and owner in b for t, b in tagged)]
    return verdict(
        answer,
        [
            (not missing, f"no action note for {missing}"),
            (len(tagged) == len(expected), f"{len(tagged)} action notes, expected {len(expected)}"),
            (has_number(answer, len(expected)), f"the count {len(expected)} is missing"),
            (not only(amounts(answer, "notes"), [len(expected)]), "another count of notes stated"),
        ],
    )


def _action_notes(lines: list[str]) -> JSONValue:
    notes = []
    for line in lines:
        if line.startswith("ACTION:"):
            action, _, owner = line.removeprefix("ACTION:").strip().rpartition(" (owner: ")
            notes.append({"title": action, "body": "Owner: " + owner.rstrip(")")})
    return notes


def _count(added: list[Any]) -> JSONValue:
    return len(added)


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    return _answer(int(str(values[0]))).text


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="minutes",
                    need=f"read the meeting minutes in {MINUTES}",
                    tool="read_file",
                    arguments={"path": MINUTES},
                ),
                Step(
                    id="notes",
                    need="add a note with a title, a body and a tag",
                    tool="notes_add",
                    arguments={"title": Item(("title",)), "body": Item(("body",)), "tags": ["action"]},
                    each=derive(Ref("minutes", ("lines",)), _action_notes),
                ),
            ),
            reads=(derive(Ref("notes"), _count),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t12-meeting-notes",
    category="state",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
