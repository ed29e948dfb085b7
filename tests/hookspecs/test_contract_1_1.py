"""Contract 1.1 (ADR 0055): its version, what it adds, and that 1.0 plugins keep working."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import hookspecs
from hookspecs import (
    CONTRACT_VERSION,
    DEFAULT_SKILL_LOADER,
    Concurrency,
    HostServices,
    JSONObject,
    JSONValue,
    PromptContext,
    PromptSection,
    SkillSpec,
    ToolContext,
    ToolDefinition,
    hookimpl,
    specs,
    tool,
)
from hookspecs.reference import ReferenceHost
from hookspecs.reference.demo_tools import demo_tool_definitions
from hookspecs.reference.dispatch import Dispatcher


def test_the_contract_version_includes_1_1() -> None:
    # 1.2 (ADR 0065) only adds; test_contract_1_2.py pins the current version.
    assert CONTRACT_VERSION == specs.CONTRACT_VERSION
    assert tuple(int(part) for part in CONTRACT_VERSION.split(".")) >= (1, 1)
    assert "CONTRACT_VERSION" in hookspecs.__all__ and "tool" in hookspecs.__all__


@pytest.mark.parametrize("name", ["agent_host_prompt_sections", "agent_host_model_tools", "agent_host_skill_catalog"])
def test_prompt_side_hooks_receive_the_services(name: str) -> None:
    assert list(inspect.signature(getattr(specs, name)).parameters) == ["context", "services"]


def test_the_tool_helper_declares_a_tool_in_a_few_lines() -> None:
    @tool("shout", description="Shout.", input_schema={"type": "object"}, concurrency=Concurrency.EXCLUSIVE)
    async def shout(arguments: JSONObject, context: ToolContext) -> JSONValue:
        return "!"

    assert isinstance(shout, ToolDefinition)
    assert (shout.spec.name, shout.spec.description, shout.spec.concurrency) == ("shout", "Shout.", "exclusive")
    assert shout.spec.source == "host" and shout.spec.input_schema == {"type": "object"}


def test_the_demo_tools_use_the_helper(tmp_path: Path) -> None:
    # The helper builds the same definitions the long form did: every demo tool has a schema and a body.
    definitions = demo_tool_definitions(tmp_path)
    assert definitions and all(d.spec.input_schema.get("type") == "object" for d in definitions)
    for module in ("files", "notes", "units"):
        source = (Path(hookspecs.__file__).parent / "reference" / "demo_tools" / f"{module}.py").read_text("utf-8")
        assert "tool(\n            name=" in source and "ToolSpec(" not in source, module


def test_a_skill_names_its_loader() -> None:
    skill = SkillSpec(name="pdf", description="d")
    assert (skill.loader, skill.loader_argument) == (DEFAULT_SKILL_LOADER, "name") == ("load_skill", "name")


def test_the_body_reaches_the_innermost_step_through_the_context() -> None:
    assert not hasattr(Dispatcher, "handlers")
    assert "body" in {f.name for f in ToolContext.__attrs_attrs__}


@pytest.mark.asyncio
async def test_no_hook_runs_inside_another(make_reference_host: Callable[..., ReferenceHost], tmp_path: Path) -> None:
    """The host chooses the skill catalog before it asks for prompt sections, never from inside them."""
    root = tmp_path / "skills"
    (root / "pdf").mkdir(parents=True)
    (root / "pdf" / "SKILL.md").write_text("---\nname: pdf\ndescription: Fill PDF forms\n---\nbody\n")
    running: list[str] = []
    nested: list[tuple[str, str]] = []

    class Probe:
        @hookimpl
        def agent_host_skill_catalog(self, context: PromptContext, services: HostServices) -> Sequence[str] | None:
            nested.extend((outer, "skill_catalog") for outer in running)
            return None

        @hookimpl(tryfirst=True)
        def agent_host_prompt_sections(self, context: PromptContext, services: HostServices) -> Sequence[PromptSection]:
            running.append("prompt_sections")
            return []

        @hookimpl(trylast=True)
        def agent_host_model_tools(self, context: PromptContext, services: HostServices) -> Sequence[str] | None:
            running.clear()
            return None

    async with make_reference_host(plugins=[Probe()], skills_dirs=[root]) as host:
        session = await host.start_session()
        assert "- pdf: Fill PDF forms" in session.system_prompt()
        running.clear()
        session.prompt_sections()
    assert nested == []


@pytest.mark.asyncio
async def test_a_1_0_plugin_without_services_still_works(make_reference_host: Callable[..., ReferenceHost]) -> None:
    class Old:
        @hookimpl
        def agent_host_prompt_sections(self, context: PromptContext) -> Sequence[PromptSection]:
            return [PromptSection(name="old", text="OLD")]

    async with make_reference_host(plugins=[Old()]) as host:
        session = await host.start_session()
        assert session.system_prompt().endswith("OLD")
