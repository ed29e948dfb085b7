"""Where the demo runs: a temporary directory it removes, or a directory it may claim, seeded with files.

A directory given by the user is used only when it is empty or carries the
marker a previous demo left; the demo seeds files, writes a session log and a
notes database there, and must not do that in a directory that holds
something else.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ptc_plus.demo.errors import DemoWorkspaceInUse, DemoWorkspaceNotADirectory

MARKER = ".ptc-plus-demo"
"""The file that says a directory was made by the demo (so a later demo may run there again)."""

MARKER_TEXT = "This directory was made by `ptc-plus demo`; a later demo may run here again.\n"

DEMO_CONFIG = """\
# PTC Plus settings for this demo workspace (seeded by `ptc-plus demo`; edit freely,
# or use `ptc-plus capabilities set IDENTITY full|on-demand|off|inherit`).
version = 1

[management]
# Decide which contracts the model gets up front; the rest stay callable and findable on demand.
enabled = true
budget_tokens = 700
# Common capabilities, most important first: they fill the budget in this order until usage
# statistics of this workspace have enough samples to decide instead.
baseline = ["host:search_files", "host:notes_add", "host:read_file"]

[statistics]
# Each demo run here is one session family: after 3 runs, what the runs really used decides
# (the unit converter the demo always looks up becomes full; read_file, never used, on demand).
enabled = true
min_samples = 3
# The demo's tool names may be a real host's too: its families stay out of your user-global statistics.
share_with_user = false

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


def claim_workspace(root: Path) -> None:
    """Mark ``root`` as the demo's, if it may be: an empty directory, or one a previous demo marked.

    A missing ``root`` is not made (a mistyped path must not become a
    workspace). Raises :class:`DemoWorkspaceNotADirectory` for anything that
    is not a directory and :class:`DemoWorkspaceInUse` when it holds anything the demo
    did not make. Nothing is written when it refuses.
    """
    if not root.is_dir():
        raise DemoWorkspaceNotADirectory(path=str(root))
    marker = root / MARKER
    if marker.is_file():
        return
    if any(root.iterdir()):
        raise DemoWorkspaceInUse(path=str(root))
    marker.write_text(MARKER_TEXT, encoding="utf-8")


@contextlib.contextmanager
def demo_workspace(root: Path | None) -> Iterator[tuple[Path, bool]]:
    """The claimed, seeded workspace and whether it is temporary.

    With ``root`` None a temporary directory is made and removed on the way
    out, however the demo ends (error, Ctrl-C included). A given ``root`` is
    claimed (:func:`claim_workspace`) and kept.
    """
    if root is not None:
        root = root.resolve()
        claim_workspace(root)
        seed_workspace(root)
        yield root, False
        return
    temporary = Path(tempfile.mkdtemp(prefix="ptc-plus-demo-")).resolve()
    try:
        claim_workspace(temporary)
        seed_workspace(temporary)
        yield temporary, True
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
