"""Values copied across the process boundary are pinned equal (ADR 0057).

The child imports the standard library only, so ``worker/`` keeps its own copy
of what both sides must agree on: the protocol version and frame header, the
shape of a reply's first bytes, the limits ``boot`` carries, the discovery
methods and the English fallback of every message template. Each copy is
checked against the host's here, so changing one side alone fails the suite.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ptc_plus.i18n import load_catalog
from ptc_plus.runtime import protocol
from ptc_plus.runtime.worker import capabilities as child_capabilities
from ptc_plus.runtime.worker import frames, main, messages, rlimits

RUNTIME = Path(protocol.__file__).resolve().parent


def test_one_protocol_version_on_both_sides() -> None:
    assert main.PROTOCOL_VERSION == protocol.VERSION


def test_one_frame_header_on_both_sides() -> None:
    assert frames.HEADER.format == protocol.HEADER.format
    assert frames.HEADER.size == protocol.HEADER.size


def test_the_hosts_reply_starts_as_the_child_expects() -> None:
    """The child names an unreadable reply from its first bytes (ADR 0051): the host must write those first."""
    frame = protocol.encode({"type": "reply", "id": 12345, "ok": True, "value": "x" * 100})
    match = frames._REPLY_ID.match(frame[protocol.HEADER.size :][: frames._HEAD])
    assert match is not None and int(match.group(1)) == 12345


def test_the_discovery_methods_agree() -> None:
    assert set(child_capabilities.METHODS) == set(protocol.DISCOVERY_METHODS)


def _boot_limit_keys() -> set[str]:
    """The keys of ``boot["limits"]`` as the host writes them (read from ``ProgramRun._boot``)."""
    tree = ast.parse((RUNTIME / "run.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "limits" and isinstance(value, ast.Dict):
                    return {k.value for k in value.keys if isinstance(k, ast.Constant)}
    raise AssertionError("no boot limits found in run.py")


def _limits_the_child_reads() -> set[str]:
    tree = ast.parse((RUNTIME / "worker" / "main.py").read_text(encoding="utf-8"))
    read = {
        node.slice.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and ast.unparse(node.value) == "boot['limits']"
    }
    return read | {name for name, _ in rlimits._RESOURCES}


def test_every_limit_the_child_reads_is_one_the_host_sends() -> None:
    read = _limits_the_child_reads()
    assert {"max_pending_calls", "max_output_bytes", "max_message_bytes", "memory_bytes"} <= read
    assert read <= _boot_limit_keys()


def test_the_childs_fallback_templates_are_the_english_catalogs() -> None:
    english = load_catalog("en")
    assert {key: messages._FALLBACK[key] for key in messages.template_keys()} == {
        key: english[key] for key in messages.template_keys()
    }
