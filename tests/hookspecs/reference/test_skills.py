"""Skills: the catalog line is in the prompt, the body loads through ``load_skill`` only when used."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from hookspecs import SkillSpec
from hookspecs.i18n import message
from hookspecs.reference import AssistantTurn, HostError, ReferenceHost, RequestedCall, ScriptedModel
from hookspecs.reference.skills import load_skills

BODY = "Step 1: open the form.\nStep 2: FILL-EVERY-FIELD."


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "pdf", f"---\nname: pdf\ndescription: 'Fill PDF forms'\n---\n{BODY}\n")
    write_skill(root, "csv", '---\nname: csv\ndescription: "Clean CSV files"\nlicense: MIT\n---\nCSV body\n')
    (root / "not-a-skill").mkdir()
    return root


@pytest.mark.asyncio
async def test_catalog_in_prompt_body_loaded_through_the_tool(
    make_reference_host: Callable[..., ReferenceHost], skills_dir: Path
) -> None:
    model = ScriptedModel(
        [
            AssistantTurn(tool_calls=(RequestedCall(call_id="k", tool="load_skill", arguments={"name": "pdf"}),)),
            AssistantTurn(text="done"),
        ]
    )
    async with make_reference_host(skills_dirs=[skills_dir]) as host:
        session = await host.start_session(model=model)
        assert host.services.skills(session.agent) == [
            SkillSpec(name="csv", description="Clean CSV files"),
            SkillSpec(name="pdf", description="Fill PDF forms"),
        ]
        await session.run_turn("fill the form")
    first, second = model.requests
    catalog = message("host.skills-prompt") + "\n- csv: Clean CSV files\n- pdf: Fill PDF forms"
    assert catalog in first.system
    assert "FILL-EVERY-FIELD" not in first.system and "FILL-EVERY-FIELD" not in second.system
    assert "FILL-EVERY-FIELD" not in str(first.messages)
    assert "load_skill" in [t.name for t in first.tools]
    (loaded,) = [m for m in second.messages if m["role"] == "tool"]
    assert orjson.loads(loaded["content"]) == {"name": "pdf", "body": BODY}


@pytest.mark.asyncio
async def test_unknown_skill_fails_and_no_skills_means_no_tool(
    make_reference_host: Callable[..., ReferenceHost], skills_dir: Path, tmp_path: Path
) -> None:
    async with make_reference_host(skills_dirs=[skills_dir]) as host:
        session = await host.start_session()
        result = await session.call_tool("load_skill", {"name": "docx"})
        assert result.error is not None and result.error.code == "unknown-skill" and result.dispatched
    empty = tmp_path / "empty"
    empty.mkdir()
    async with make_reference_host(skills_dirs=[empty]) as host:
        session = await host.start_session()
        assert "load_skill" not in host.view(session.agent)
        assert message("host.skills-prompt") not in session.system_prompt()


def test_first_root_wins_for_a_duplicate_name(tmp_path: Path) -> None:
    write_skill(tmp_path / "a", "pdf", "---\nname: pdf\ndescription: from a\n---\nA\n")
    write_skill(tmp_path / "b", "pdf-too", "---\nname: pdf\ndescription: from b\n---\nB\n")
    (skill,) = load_skills([tmp_path / "a", tmp_path / "b"])
    assert skill.spec.description == "from a" and skill.body() == "A"
    assert skill.spec.identity == "skill:pdf"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("name: pdf\ndescription: x\n\nbody\n", "missing front matter"),
        ("---\nname: pdf\ndescription: x\nbody\n", "unterminated front matter"),
        ("---\nname: pdf\n---\nbody\n", "name and description are required"),
        ("---\ndescription: x\n---\nbody\n", "name and description are required"),
        ("", "missing front matter"),
    ],
)
def test_bad_front_matter_is_host_0401(
    make_reference_host: Callable[..., ReferenceHost], tmp_path: Path, text: str, reason: str
) -> None:
    path = write_skill(tmp_path, "broken", text)
    with pytest.raises(HostError) as excinfo:
        make_reference_host(skills_dirs=[tmp_path])
    assert excinfo.value.code == "HOST-0401"
    assert excinfo.value.params == {"path": str(path), "reason": reason}
    assert str(path) in excinfo.value.message("en")
