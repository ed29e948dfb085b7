"""Seed files for the demo workspace."""

from __future__ import annotations

from pathlib import Path

SEED_FILES = {
    "README.md": "# Trail planner\n\nPlans long runs.\n\nTODO: document the elevation model.\n",
    "docs/routes.md": "# Routes\n\nThe river loop is 26.2 miles.\n\nTODO: add the hill repeats route.\n",
    "src/planner.py": "def pace(distance_km: float, minutes: float) -> float:\n    return minutes / distance_km\n",
}


def seed_workspace(root: Path) -> None:
    """Write the seed files that are missing (never overwrites a user's file)."""
    for relative, text in SEED_FILES.items():
        target = root / relative
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
