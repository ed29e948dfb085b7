"""Agent-Skills-style folders: ``<root>/<name>/SKILL.md`` with ``name``/``description`` front matter.

Only the catalog line (name + description) enters the system prompt; the
body is read from disk when the ``load_skill`` tool is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from hookspecs.reference.errors import HostError
from hookspecs.services import ToolContext, ToolDefinition, ToolFailure
from hookspecs.types import Concurrency, JSONObject, JSONValue, SkillSpec, ToolSpec

LOAD_SKILL = "load_skill"


@attrs.frozen(kw_only=True)
class Skill:
    spec: SkillSpec
    path: Path

    def body(self) -> str:
        return _split_front_matter(self.path.read_text(encoding="utf-8"), self.path)[1].strip()


def load_skills(roots: Iterable[Path], loader: str = LOAD_SKILL) -> list[Skill]:
    """Every ``SKILL.md`` under the roots, sorted by name, loaded by the tool ``loader``.

    Bad front matter raises ``HOST-0401``.
    """
    skills: dict[str, Skill] = {}
    for root in roots:
        for path in sorted(Path(root).glob("*/SKILL.md")):
            meta, _ = _split_front_matter(path.read_text(encoding="utf-8"), path)
            name, description = meta.get("name", ""), meta.get("description", "")
            if not name or not description:
                raise HostError("HOST-0401", path=str(path), reason="name and description are required")
            skills.setdefault(name, Skill(spec=SkillSpec(name=name, description=description, loader=loader), path=path))
    return [skills[name] for name in sorted(skills)]


def _split_front_matter(text: str, path: Path) -> tuple[dict[str, str], str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise HostError("HOST-0401", path=str(path), reason="missing front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise HostError("HOST-0401", path=str(path), reason="unterminated front matter") from None
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip()] = value.strip().strip("'\"")
    return meta, "\n".join(lines[end + 1 :])


def catalog_text(skills: Sequence[SkillSpec]) -> str:
    return "\n".join(f"- {s.name}: {s.description}" for s in skills)


def load_skill_tool(skills: Sequence[Skill], name: str = LOAD_SKILL) -> ToolDefinition:
    """The tool ``name`` that loads a skill's body into context (a skill counts as used only then)."""
    by_name = {s.spec.name: s for s in skills}

    async def handler(arguments: JSONObject, context: ToolContext) -> JSONValue:
        visible = {s.name for s in context.services.skills(context.call.caller)}
        skill = by_name.get(str(arguments["name"]))
        if skill is None or skill.spec.name not in visible:
            raise ToolFailure("unknown-skill", f"no skill named {arguments['name']!r}")
        return {"name": skill.spec.name, "body": skill.body()}

    spec = ToolSpec(
        name=name,
        description="Load the full instructions of a skill listed in the skill catalog.",
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The skill's name from the catalog."}},
            "required": ["name"],
            "additionalProperties": False,
        },
        concurrency=Concurrency.PARALLEL,
        source="host",
    )
    return ToolDefinition(spec=spec, handler=handler)
