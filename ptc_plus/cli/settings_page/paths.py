"""Paths as the page shows them: under the home directory from ``~``, as a shell prompt shows them.

Shorter at 390 pixels, and a screenshot of the page names no user; every other path stays absolute.
"""

from __future__ import annotations

from pathlib import Path


def shown(path: str | Path) -> str:
    """``path`` with the home directory written ``~`` (a path outside it, or no home: as it is)."""
    text = str(path)
    try:
        inside = Path(text).relative_to(Path.home())
    except (ValueError, RuntimeError):  # outside the home directory, or none can be found
        return text
    return "~" if inside == Path() else f"~/{inside}"
