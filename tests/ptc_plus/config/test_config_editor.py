"""set_capability: atomic, idempotent, comment-preserving edits of the workspace file."""

from __future__ import annotations

import os
import threading
import tomllib
from pathlib import Path

import pytest

from ptc_plus.config import Disclosure, load_config, set_capability, workspace_config_file
from ptc_plus.config.errors import (
    CapabilityIdentityInvalid,
    ConfigEditRefused,
    ConfigSyntaxError,
    DisclosureValueInvalid,
)

ORIGINAL = """# Workspace settings for the demo
version = 1

[management]
enabled = true  # keep this comment
budget_tokens = 900

# explicit choices below
[capabilities."host:read"]
disclosure = "off"  # noisy tool
"""


def load(workspace: Path) -> dict[str, Disclosure]:
    config = load_config(workspace, user_file=workspace / "absent.toml").config
    return {identity: choice.disclosure for identity, choice in config.capabilities.items()}


def write(workspace: Path, text: str) -> Path:
    path = workspace_config_file(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_creates_the_file_with_a_version(tmp_path: Path) -> None:
    result = set_capability(tmp_path, "mcp:github/create_issue", "full")
    assert result.changed and result.previous is None
    text = result.file.read_text(encoding="utf-8")
    assert text.startswith("version = 1\n")
    assert load(tmp_path) == {"mcp:github/create_issue": Disclosure.FULL}


def test_preserves_comments_and_other_keys(tmp_path: Path) -> None:
    path = write(tmp_path, ORIGINAL)
    set_capability(tmp_path, "skill:pdf", "on-demand")
    result = set_capability(tmp_path, "host:read", "full")
    assert result.previous == "off"
    text = path.read_text(encoding="utf-8")
    for comment in ("# Workspace settings for the demo", "# keep this comment", "# explicit choices below"):
        assert comment in text
    assert text.startswith(ORIGINAL.split("[capabilities")[0])
    assert load(tmp_path) == {"host:read": Disclosure.FULL, "skill:pdf": Disclosure.ON_DEMAND}
    assert load_config(tmp_path, user_file=tmp_path / "absent.toml").config.management.budget_tokens == 900


def test_idempotent_second_call_does_not_touch_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, ORIGINAL)
    first = set_capability(tmp_path, "skill:pdf", "on-demand")
    before = path.read_bytes(), path.stat().st_ino
    second = set_capability(tmp_path, "skill:pdf", "on-demand")
    assert first.changed and not second.changed
    assert (path.read_bytes(), path.stat().st_ino) == before  # not even replaced by identical bytes


def test_same_value_as_file_is_no_change(tmp_path: Path) -> None:
    path = write(tmp_path, ORIGINAL)
    assert set_capability(tmp_path, "host:read", "off").changed is False
    assert path.read_text(encoding="utf-8") == ORIGINAL


def test_inherit_removes_the_choice_and_round_trips(tmp_path: Path) -> None:
    path = write(tmp_path, ORIGINAL)
    set_capability(tmp_path, "skill:pdf", "full")
    set_capability(tmp_path, "skill:pdf", "inherit")
    # tomlkit keeps the blank line it put before the added table; nothing else differs
    assert path.read_text(encoding="utf-8").rstrip() == ORIGINAL.rstrip()
    result = set_capability(tmp_path, "host:read", "inherit")
    assert result.changed and result.previous == "off"
    assert load(tmp_path) == {}
    assert "# keep this comment" in path.read_text(encoding="utf-8")
    assert set_capability(tmp_path, "host:read", "inherit").changed is False


def test_inherit_without_a_file_creates_nothing(tmp_path: Path) -> None:
    assert set_capability(tmp_path, "host:read", "inherit").changed is False
    assert not workspace_config_file(tmp_path).exists()


def test_leaves_no_temporary_files(tmp_path: Path) -> None:
    write(tmp_path, ORIGINAL)
    for value in ("full", "off", "on-demand", "inherit"):
        set_capability(tmp_path, "host:x", value)
    leftovers = [name for name in os.listdir(workspace_config_file(tmp_path).parent) if name.endswith(".tmp")]
    assert leftovers == []


def test_concurrent_edits_all_land(tmp_path: Path) -> None:
    write(tmp_path, ORIGINAL)
    identities = [f"mcp:server/tool_{n}" for n in range(8)]
    barrier = threading.Barrier(len(identities))
    errors: list[BaseException] = []

    def edit(identity: str) -> None:
        try:
            barrier.wait()
            set_capability(tmp_path, identity, "full")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=edit, args=(identity,)) for identity in identities]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert load(tmp_path) == {"host:read": Disclosure.OFF} | dict.fromkeys(identities, Disclosure.FULL)


def test_refuses_a_file_that_is_not_toml_and_leaves_it_alone(tmp_path: Path) -> None:
    path = write(tmp_path, "[capabilities\nbroken")
    with pytest.raises(ConfigSyntaxError) as caught:
        set_capability(tmp_path, "host:a", "full")
    assert str(path) in caught.value.message("en") and str(path) in caught.value.message("zh")
    assert path.read_text(encoding="utf-8") == "[capabilities\nbroken"


def test_refuses_capabilities_that_is_not_a_table(tmp_path: Path) -> None:
    write(tmp_path, "capabilities = 3\n")
    with pytest.raises(ConfigEditRefused):
        set_capability(tmp_path, "host:a", "full")


@pytest.mark.parametrize("value", ["FULL", "hidden", ""])
def test_rejects_unknown_values(tmp_path: Path, value: str) -> None:
    with pytest.raises(DisclosureValueInvalid):
        set_capability(tmp_path, "host:a", value)


@pytest.mark.parametrize("identity", ["", "  ", "host:a\nb", 'weird"id', "host:a b", "no-colon", "host:", "host:a\\b"])
def test_rejects_unusable_identities(tmp_path: Path, identity: str) -> None:
    with pytest.raises(CapabilityIdentityInvalid):
        set_capability(tmp_path, identity, "full")


def test_inline_capabilities_table_is_edited_in_place(tmp_path: Path) -> None:
    write(tmp_path, 'capabilities = { "host:a" = { disclosure = "off" } }\n')
    set_capability(tmp_path, "host:b", "full")
    assert load(tmp_path) == {"host:a": Disclosure.OFF, "host:b": Disclosure.FULL}


@pytest.mark.parametrize("identity", ["host:read_file", "mcp:github/create_issue", "skill:pdf", "mcp-resources:git"])
def test_accepts_catalog_identities(tmp_path: Path, identity: str) -> None:
    set_capability(tmp_path, identity, "off")
    assert load(tmp_path)[identity] is Disclosure.OFF


def test_inherit_removes_the_tables_own_comment_and_keeps_the_next_ones(tmp_path: Path) -> None:
    following = '\n# keep: about host:next\n[capabilities."host:next"]  # trailing note\ndisclosure = "full"\n'
    path = write(tmp_path, ORIGINAL + following)
    set_capability(tmp_path, "host:read", "inherit")
    text = path.read_text("utf-8")
    assert "explicit choices below" not in text and "noisy tool" not in text
    assert '# keep: about host:next\n[capabilities."host:next"]  # trailing note\n' in text
    assert "# keep this comment" in text
    assert load(tmp_path) == {"host:next": Disclosure.FULL}


def test_inherit_of_a_dotted_entry_falls_back_to_tomlkit(tmp_path: Path) -> None:
    path = write(tmp_path, '[capabilities]\n# a note\n"host:a".disclosure = "off"\n"host:b".disclosure = "full"\n')
    set_capability(tmp_path, "host:a", "inherit")
    assert load(tmp_path) == {"host:b": Disclosure.FULL}
    assert '"host:b".disclosure = "full"' in path.read_text("utf-8")


def test_a_table_added_to_the_starter_leaves_the_next_sections_comment_with_its_section(tmp_path: Path) -> None:
    from ptc_plus.config.paths import Scope
    from ptc_plus.config.starter import starter_text

    path = tmp_path / ".ptc-plus" / "config.toml"
    path.parent.mkdir()
    starter = starter_text(Scope.WORKSPACE)
    path.write_text(starter, encoding="utf-8")
    set_capability(tmp_path, "host:write_file", "off")
    set_capability(tmp_path, "host:read_file", "full")
    lines = path.read_text(encoding="utf-8").splitlines()
    # Each section's comment stays directly above its own header: the added tables went in before it.
    for index, line in enumerate(lines):
        if line.startswith("[") and not line.startswith("[capabilities."):
            assert lines[index - 1].startswith("# "), (line, lines[index - 2 : index + 1])
    statistics = lines.index("[statistics]")
    assert lines[statistics - 1] == "# Whether usage statistics vote in new plans."
    assert lines.index('[capabilities."host:read_file"]') < statistics
    assert tomllib.loads(path.read_text(encoding="utf-8"))["capabilities"] == {
        "host:write_file": {"disclosure": "off"},
        "host:read_file": {"disclosure": "full"},
    }
    # And the way back is byte for byte the starter again.
    set_capability(tmp_path, "host:read_file", "inherit")
    set_capability(tmp_path, "host:write_file", "inherit")
    assert path.read_text(encoding="utf-8") == starter
