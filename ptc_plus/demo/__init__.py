"""The scripted demo session on the reference host (``ptc-plus demo``)."""

from __future__ import annotations

from ptc_plus.demo.run import run_demo

__all__ = ["run_demo"]
