"""The reference host: a small, real host implementing the whole contract.

It is the embedded default for ``ptc-plus demo`` and the test bed of the
plugin: sessions as append-only JSONL logs, JSON Schema validation, an
ordered scheduler, skills, a guard, slash commands, compaction, a scripted
model and an OpenAI-compatible chat client.
"""

from __future__ import annotations

from hookspecs.reference.builtin import Approver
from hookspecs.reference.errors import HostError
from hookspecs.reference.host import ReferenceHost
from hookspecs.reference.loading import BLOCKLIST_ENV
from hookspecs.reference.model import AssistantTurn, Model, ModelRequest, RequestedCall, ScriptedModel
from hookspecs.reference.scheduler import LaneClosed, OrderedLane
from hookspecs.reference.session import Session

__all__ = [
    "BLOCKLIST_ENV",
    "Approver",
    "AssistantTurn",
    "HostError",
    "LaneClosed",
    "Model",
    "ModelRequest",
    "OrderedLane",
    "ReferenceHost",
    "RequestedCall",
    "ScriptedModel",
    "Session",
]
