"""Skills: the catalog line is in the prompt, the body loads through ``load_skill`` only when used."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from hookspecs import SkillSpec
from hookspecs.i18n import message
from hookspecs.reference import AssistantTurn, HostError, ReferenceHost, RequestedCall, ScriptedModel
from hookspecs.reference.skills import FrontMatter, SkillFileError, load_skills

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


@pytest.mark.asyncio
async def test_reloading_the_folders_shows_edited_added_and_removed_skills(
    make_reference_host: Callable[..., ReferenceHost], skills_dir: Path, tmp_path: Path
) -> None:
    async with make_reference_host(skills_dirs=[skills_dir]) as host:
        session = await host.start_session()
        names = host.view(session.agent).names()
        (skills_dir / "pdf" / "SKILL.md").write_text(
            "---\nname: pdf\ndescription: Sign PDF forms\n---\nNew.\n", "utf-8"
        )
        write_skill(skills_dir, "docx", "---\nname: docx\ndescription: Edit documents\n---\nDocx body\n")
        host.reload_skills()
        assert [(s.name, s.description) for s in host.services.skills(session.agent)] == [
            ("csv", "Clean CSV files"),
            ("docx", "Edit documents"),
            ("pdf", "Sign PDF forms"),
        ]
        assert host.view(session.agent).names() == names  # the loader keeps its place
        loaded = await session.call_tool("load_skill", {"name": "docx"})
        assert loaded.ok and loaded.value == {"name": "docx", "body": "Docx body"}

        for folder in ("pdf", "csv", "docx"):
            (skills_dir / folder / "SKILL.md").unlink()
        host.reload_skills()
        assert host.services.skills(session.agent) == [] and "load_skill" not in host.view(session.agent)


def test_first_root_wins_for_a_duplicate_name(tmp_path: Path) -> None:
    write_skill(tmp_path / "a", "pdf", "---\nname: pdf\ndescription: from a\n---\nA\n")
    write_skill(tmp_path / "b", "pdf-too", "---\nname: pdf\ndescription: from b\n---\nB\n")
    (skill,) = load_skills([tmp_path / "a", tmp_path / "b"])
    assert skill.spec.description == "from a" and skill.body() == "A"
    assert skill.spec.identity == "skill:pdf"


FOLDED = """\
---
name: pdf-forms
description: >
  Fill PDF forms,
  merge PDF files.
license: Apache-2.0
compatibility: "Needs poppler-utils: pdftotext"
allowed-tools: Bash(pdftotext:*) Read
metadata:
  author: example-org
  version: 1.10
---
Body
"""


@pytest.mark.parametrize(
    ("front", "description"),
    [
        ("description: >\n  Fill PDF forms,\n  merge files.\n", "Fill PDF forms, merge files."),
        ("description: |\n  Fill PDF forms.\n  Use for: scans\n", "Fill PDF forms. Use for: scans"),
        ("description: 'It''s for forms: PDF'\n", "It's for forms: PDF"),
        ('description: "Tab\\tand: colon"\n', "Tab and: colon"),
        ("description: plain words, a:colon # a comment\n", "plain words, a:colon"),
        ("description: >-\n  one\n\n  two\n", "one two"),
    ],
)
def test_description_forms(tmp_path: Path, front: str, description: str) -> None:
    write_skill(tmp_path, "pdf", f"---\nname: pdf\n{front}---\nbody\n")
    (skill,) = load_skills([tmp_path])
    assert skill.spec.description == description


def test_every_field_of_the_specification_is_kept(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-forms", FOLDED)
    (skill,) = load_skills([tmp_path])
    assert skill.spec == SkillSpec(name="pdf-forms", description="Fill PDF forms, merge PDF files.")
    assert skill.front_matter == FrontMatter(
        name="pdf-forms",
        description="Fill PDF forms, merge PDF files.",
        license="Apache-2.0",
        compatibility="Needs poppler-utils: pdftotext",
        allowed_tools=("Bash(pdftotext:*)", "Read"),
        metadata=(("author", "example-org"), ("version", "1.10")),
    )
    assert skill.body() == "Body"


def test_a_yaml_list_of_allowed_tools_and_unknown_keys_are_accepted(tmp_path: Path) -> None:
    write_skill(
        tmp_path, "x", "---\nname: x\ndescription: d\nallowed-tools: [Read, Grep]\nargument-hint: '[file]'\n---\n"
    )
    (skill,) = load_skills([tmp_path])
    assert skill.front_matter.allowed_tools == ("Read", "Grep")


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("name: pdf\ndescription: x\n\nbody\n", 1, "missing-front-matter"),
        ("", 1, "missing-front-matter"),
        ("---\nname: pdf\ndescription: x\nbody\n", 1, "unterminated"),
        ("---\n---\nbody\n", 1, "not-a-mapping"),
        ("---\n- name\n- pdf\n---\nbody\n", 2, "not-a-mapping"),
        ("---\nname: pdf\n---\nbody\n", 1, "description-missing"),
        ("---\nname: pdf\ndescription: '  '\n---\n", 3, "description-missing"),
        ("---\ndescription: x\n---\nbody\n", 1, "name-missing"),
        ("---\ndescription: x\nname: PDF_Forms\n---\n", 3, "name-invalid"),
        ("---\ndescription: x\nname: -pdf\n---\n", 3, "name-invalid"),
        ("---\ndescription: x\nname: pdf--forms\n---\n", 3, "name-invalid"),
        ("---\ndescription: x\nname: yes\n---\n", 3, "name-invalid"),
        (f"---\nname: pdf\ndescription: x\n\n\nname: {'a' * 65}\n---\n", 6, "name-invalid"),
        ("---\nname: pdf\ndescription: [a, b]\n---\n", 3, "not-a-string"),
        (f"---\nname: pdf\ndescription: {'d' * 1025}\n---\n", 3, "description-too-long"),
        ("---\nname: pdf\ndescription: x\nlicense: 2\n---\n", 4, "not-a-string"),
        (f"---\nname: pdf\ndescription: x\ncompatibility: {'c' * 501}\n---\n", 4, "compatibility-too-long"),
        ("---\nname: pdf\ndescription: x\nallowed-tools: {a: 1}\n---\n", 4, "allowed-tools-invalid"),
        ("---\nname: pdf\ndescription: x\nmetadata:\n  nested: {a: 1}\n---\n", 4, "metadata-invalid"),
    ],
)
def test_bad_front_matter_is_located(
    make_reference_host: Callable[..., ReferenceHost], tmp_path: Path, text: str, line: int, problem: str
) -> None:
    path = write_skill(tmp_path, "broken", text)
    with pytest.raises(SkillFileError) as excinfo:
        make_reference_host(skills_dirs=[tmp_path])
    error = excinfo.value
    assert (error.code, error.path, error.line, error.column, error.problem) == ("HOST-0401", path, line, None, problem)
    assert error.message("en").startswith(f"Skill file {path}, line {line}: ")
    assert error.message("zh").startswith(f"技能文件 {path} 第 {line} 行：")


@pytest.mark.parametrize(
    ("front", "line", "column"),
    [
        ("name: pdf\ndescription: x: y\n", 3, 15),  # a plain scalar may not hold ": "
        ("name: pdf\ndescription: 'unclosed\n", 4, 1),
        ("name: pdf\n  description: x\n", 3, 14),
        ("name: pdf\ndescription: >\n  folded\n bad: indent\n", 5, 2),
        ("name: pdf\ndescription: x\n\tlicense: MIT\n", 4, 1),
    ],
)
def test_a_yaml_syntax_error_gives_line_and_column(tmp_path: Path, front: str, line: int, column: int) -> None:
    path = write_skill(tmp_path, "broken", f"---\n{front}---\nbody\n")
    with pytest.raises(SkillFileError) as excinfo:
        load_skills([tmp_path])
    error = excinfo.value
    assert (error.code, error.line, error.column, error.problem) == ("HOST-0402", line, column, "yaml")
    assert error.message("en").startswith(
        f"Skill file {path}, line {line}, column {column}: the front matter is not valid YAML ("
    )
    assert error.message("zh").startswith(f"技能文件 {path} 第 {line} 行第 {column} 列：")
    assert isinstance(error, HostError)


def test_a_file_that_is_not_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "bad" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(b"---\nname: bad\ndescription: caf\xe9\n---\n")
    with pytest.raises(SkillFileError) as excinfo:
        load_skills([tmp_path])
    assert (excinfo.value.line, excinfo.value.problem) == (3, "not-utf8")


def test_front_matter_is_loaded_safely(tmp_path: Path) -> None:
    write_skill(tmp_path, "x", "---\nname: x\ndescription: !!python/object/apply:os.system ['true']\n---\n")
    with pytest.raises(SkillFileError) as excinfo:
        load_skills([tmp_path])
    assert excinfo.value.code == "HOST-0402"
