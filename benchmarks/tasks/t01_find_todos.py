"""t01 — find and count across many files: TODO comments in 80 Python files."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn, derive

from .oracles import has_number, verdict

PROMPT = "How many TODO comments are there in the Python files of this workspace, and which file has the most of them?"
HOTSPOT = "src/billing/invoices.py"


def setup(workspace: Path, world: Any) -> None:
    rng = random.Random(1501)
    for package in ("api", "billing", "catalog", "checkout", "search", "shipping", "users", "reports"):
        for module in (
            "models",
            "views",
            "service",
            "helpers",
            "invoices",
            "queries",
            "tasks",
            "schemas",
            "cli",
            "cache",
        ):
            lines = [f'"""The {module} of the {package} package."""', ""]
            for n in range(rng.randint(18, 40)):
                if rng.random() < 0.08:
                    lines.append(
                        f"    # TODO: handle the {rng.choice(('empty', 'late', 'bad', 'duplicate'))} case ({n})"
                    )
                else:
                    lines.append(f"    value_{n} = compute({n})  # step {n}")
            if f"src/{package}/{module}.py" == HOTSPOT:
                lines += [f"    # TODO: split invoice rule {k}" for k in range(12)]
            path = workspace / "src" / package / f"{module}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (workspace / "docs").mkdir(exist_ok=True)
    (workspace / "docs" / "roadmap.md").write_text("# Roadmap\n\nTODO: write it\nTODO: review it\n", encoding="utf-8")


def oracle(answer: str, end: EndState) -> Verdict:
    per_file = Counter(
        str(path.relative_to(end.workspace))
        for path in end.workspace.rglob("*.py")
        if not any(part.startswith(".") for part in path.relative_to(end.workspace).parts)
        for line in path.read_text(encoding="utf-8").splitlines()
        if "todo" in line.lower()
    )
    top, _ = per_file.most_common(1)[0]
    named = {path for path in per_file if path in answer} | set(re.findall(r"[\w/]+\.py\b", answer))
    return verdict(
        answer,
        [
            (has_number(answer, per_file.total()), f"the total {per_file.total()} is missing"),
            (top in answer, f"the file with the most ({top}) is missing"),
            (named <= {top}, f"other files named as the one with the most: {sorted(named - {top})}"),
        ],
    )


def _todo_counts(matches: list[Any]) -> JSONValue:
    import collections

    per_file = collections.Counter(match["path"] for match in matches)
    top, most = per_file.most_common(1)[0]
    return {"total": per_file.total(), "files": len(per_file), "top": top, "top_count": most}


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    found: Any = values[0]
    return (
        f"There are {found['total']} TODO comments in {found['files']} Python files; "
        f"{found['top']} has the most ({found['top_count']})."
    )


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="todos",
                    need="find every TODO comment in the Python files",
                    tool="search_files",
                    arguments={"query": "TODO", "glob": "*.py", "max_results": 1000},
                ),
            ),
            reads=(derive(Ref("todos", ("matches",)), _todo_counts),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t01-find-todos",
    category="find-count",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
