"""Agent Skills folders: ``<root>/<folder>/SKILL.md`` with YAML front matter (ADR 0063).

The front matter is parsed by PyYAML's safe loader, so every YAML form the
Agent Skills specification allows works: plain, quoted, folded (``>``) and
literal (``|``) scalars, the ``metadata`` mapping, ``allowed-tools``. Only the
catalog line (name + description) enters the system prompt; the body is read
from disk when the ``load_skill`` tool is called.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

from hookspecs.i18n import message
from hookspecs.reference.errors import HostError
from hookspecs.services import ToolContext, ToolDefinition, ToolFailure
from hookspecs.types import Concurrency, JSONObject, JSONValue, SkillSpec, ToolSpec

LOAD_SKILL = "load_skill"

# The Agent Skills specification's limits.
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_NAME_MAX = 64
_DESCRIPTION_MAX = 1024
_COMPATIBILITY_MAX = 500
_DELIMITER = "---"

_Fail = Callable[[str, str], "SkillFileError"]
"""Builds the error for a problem token at a key's line."""


class SkillFileError(HostError):
    """A ``SKILL.md`` the host cannot use, located in its file.

    ``HOST-0401`` for a problem with the front matter's content (at ``line``),
    ``HOST-0402`` for front matter that is not YAML (at ``line`` and
    ``column``, with PyYAML's own description as ``detail``). ``problem`` is a
    stable token; its words are ``host.skill.<problem>`` in both locales.

    :ivar path: the file.
    :ivar line: 1-based line in the file.
    :ivar column: 1-based column, when the YAML parser gives one.
    :ivar problem: stable token such as ``name-invalid``.
    """

    def __init__(
        self, *, path: Path, line: int, problem: str, column: int | None = None, field: str = "", detail: str = ""
    ) -> None:
        self.path, self.line, self.column, self.problem = path, line, column, problem
        params: dict[str, Any] = {"path": str(path), "line": line, "problem": problem, "field": field}
        if column is not None:
            params["column"] = column
        if detail:
            params["detail"] = detail
        super().__init__("HOST-0402" if column is not None else "HOST-0401", **params)

    def message(self, lang: str | None = None) -> str:
        params = dict(self.params)
        reason = message(f"host.skill.{params.pop('problem')}", lang, field=params.pop("field"))
        if "detail" in params:
            reason = f"{reason} ({params.pop('detail')})"
        return message(f"error.{self.code}", lang, reason=reason, **params)


@attrs.frozen(kw_only=True)
class FrontMatter:
    """The fields of a skill's front matter the host keeps; other keys are ignored.

    :ivar description: the description as one line (YAML line breaks and
        indentation collapsed), since it becomes one line of the catalog.
    :ivar allowed_tools: ``allowed-tools``, split on whitespace (a YAML list is accepted too).
    :ivar metadata: ``metadata``, each value as written in the file (``1.10`` stays ``"1.10"``).
    """

    name: str
    description: str
    license: str = ""
    compatibility: str = ""
    allowed_tools: tuple[str, ...] = ()
    metadata: tuple[tuple[str, str], ...] = ()


@attrs.frozen(kw_only=True)
class Skill:
    spec: SkillSpec
    path: Path
    front_matter: FrontMatter

    def body(self) -> str:
        return _split(self.path.read_text(encoding="utf-8"), self.path)[1].strip()


def load_skills(roots: Iterable[Path], loader: str = LOAD_SKILL) -> list[Skill]:
    """Every ``SKILL.md`` under the roots, sorted by name, loaded by the tool ``loader``.

    The first root holding a name wins. One unusable file stops the load with
    a :class:`SkillFileError` (``HOST-0401``/``HOST-0402``) naming the file and line.
    """
    skills: dict[str, Skill] = {}
    for root in roots:
        for path in sorted(Path(root).glob("*/SKILL.md")):
            front = read_front_matter(path)
            spec = SkillSpec(name=front.name, description=front.description, loader=loader)
            skills.setdefault(front.name, Skill(spec=spec, path=path, front_matter=front))
    return [skills[name] for name in sorted(skills)]


def read_front_matter(path: Path) -> FrontMatter:
    """The checked front matter of the ``SKILL.md`` at ``path``; raises :class:`SkillFileError`."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillFileError(path=path, line=raw[: exc.start].count(b"\n") + 1, problem="not-utf8") from None
    return parse_front_matter(_split(text, path)[0], path)


def parse_front_matter(source: str, path: Path) -> FrontMatter:
    """Check the YAML between the delimiters (file line 2 onwards) against the specification."""
    try:
        # yaml.compose with the safe loader keeps each key's line; safe_load builds the values.
        node = yaml.compose(source, Loader=yaml.SafeLoader)
        data = yaml.safe_load(source)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 2, mark.column + 1) if mark is not None else (2, 1)
        detail = exc.problem or exc.context or ""
        raise SkillFileError(path=path, line=line, column=column, problem="yaml", detail=detail) from None
    except yaml.YAMLError as exc:
        raise SkillFileError(path=path, line=2, column=1, problem="yaml", detail=str(exc)) from None
    if not isinstance(node, yaml.MappingNode) or not isinstance(data, dict):
        line = node.start_mark.line + 2 if node is not None else 1
        raise SkillFileError(path=path, line=line, problem="not-a-mapping")
    lines = {str(key.value): (key.start_mark.line + 2, value) for key, value in node.value}

    def fail(problem: str, key: str) -> SkillFileError:
        return SkillFileError(path=path, line=lines[key][0] if key in lines else 1, problem=problem, field=key)

    name = data.get("name")
    if name is None or name == "":
        raise fail("name-missing", "name")
    if not isinstance(name, str) or len(name) > _NAME_MAX or not _NAME.fullmatch(name):
        raise fail("name-invalid", "name")
    description = data.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        raise fail("description-missing", "description")
    if not isinstance(description, str):
        raise fail("not-a-string", "description")
    description = " ".join(description.split())
    if len(description) > _DESCRIPTION_MAX:
        raise fail("description-too-long", "description")
    for key in ("license", "compatibility"):
        if key in data and not isinstance(data[key], str):
            raise fail("not-a-string", key)
    compatibility = str(data.get("compatibility", "")).strip()
    if len(compatibility) > _COMPATIBILITY_MAX:
        raise fail("compatibility-too-long", "compatibility")
    return FrontMatter(
        name=name,
        description=description,
        license=str(data.get("license", "")).strip(),
        compatibility=compatibility,
        allowed_tools=_allowed_tools(data.get("allowed-tools"), fail),
        metadata=_metadata(lines["metadata"][1] if "metadata" in lines else None, fail),
    )


def _allowed_tools(value: object, fail: _Fail) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise fail("allowed-tools-invalid", "allowed-tools")


def _metadata(node: yaml.Node | None, fail: _Fail) -> tuple[tuple[str, str], ...]:
    if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"):
        return ()
    # Values are taken from the scalar nodes, as written: ``version: 1.10`` must not become 1.1.
    if not isinstance(node, yaml.MappingNode) or not all(
        isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode) for key, value in node.value
    ):
        raise fail("metadata-invalid", "metadata")
    return tuple((str(key.value), str(value.value)) for key, value in node.value)


def _split(text: str, path: Path) -> tuple[str, str]:
    """The front matter's YAML and the body; a file without both delimiters is refused at its line."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != _DELIMITER:
        raise SkillFileError(path=path, line=1, problem="missing-front-matter")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == _DELIMITER), None)
    if end is None:
        raise SkillFileError(path=path, line=1, problem="unterminated")
    return "\n".join(lines[1:end]) + "\n", "\n".join(lines[end + 1 :])


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
