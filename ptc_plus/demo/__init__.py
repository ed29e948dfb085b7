"""The scripted demo session on the reference host (``ptc-plus demo``)."""

from __future__ import annotations

from ptc_plus.demo.errors import DemoWorkspaceInUse, DemoWorkspaceNotADirectory
from ptc_plus.demo.native_twin import CODE, NATIVE, Bill
from ptc_plus.demo.run import run_demo
from ptc_plus.demo.view import View

__all__ = ["CODE", "NATIVE", "Bill", "DemoWorkspaceInUse", "DemoWorkspaceNotADirectory", "View", "run_demo"]
