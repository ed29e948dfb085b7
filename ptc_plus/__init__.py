"""PTC Plus: Programmatic Tool Calling and capability management as a host plugin."""

from __future__ import annotations

__version__ = "0.1.0"
"""The package's version, read by the build (``[tool.hatch.version]``) and by ``ptc-plus --version``: a
literal, so importing ``ptc_plus`` does not scan the installed distributions (issue 32, ADR 0115)."""

__all__ = ["__version__"]
