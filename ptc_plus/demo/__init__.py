"""The scripted demo session on the reference host (``ptc-plus demo``)."""

from __future__ import annotations

from ptc_plus.demo.errors import DemoWorkspaceInUse, DemoWorkspaceNotADirectory
from ptc_plus.demo.run import run_demo

__all__ = ["DemoWorkspaceInUse", "DemoWorkspaceNotADirectory", "run_demo"]
