"""Seed files for the demo workspace."""

from __future__ import annotations

from pathlib import Path

DEMO_CONFIG = """\
# PTC Plus settings for this demo workspace (seeded by `ptc-plus demo`; edit freely,
# or use `ptc-plus capabilities set IDENTITY full|on-demand|off|inherit`).
version = 1

[management]
# Decide which contracts the model gets up front; the rest stay callable and findable on demand.
enabled = true
budget_tokens = 250
# Common capabilities, most important first: they fill the budget in this order.
baseline = ["host:search_files", "host:notes_add", "host:read_file"]

# The demo never deletes notes: off means absent from programs, discovery and the catalog.
[capabilities."host:notes_delete"]
disclosure = "off"
"""

SEED_FILES = {
    "README.md": "# Trail planner\n\nPlans long runs.\n\nTODO: document the elevation model.\n",
    "docs/routes.md": "# Routes\n\nThe river loop is 26.2 miles.\n\nTODO: add the hill repeats route.\n",
    "src/planner.py": "def pace(distance_km: float, minutes: float) -> float:\n    return minutes / distance_km\n",
    ".ptc-plus/config.toml": DEMO_CONFIG,
}


def seed_workspace(root: Path) -> None:
    """Write the seed files that are missing, the workspace config included (never overwrites a user's file)."""
    for relative, text in SEED_FILES.items():
        target = root / relative
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
