"""``ptc-plus settings``: a local page beside the terminal commands (issue 34, ADR 0126).

The page shows, for the workspace file and the user file side by side, the management switch, the
baseline, every capability choice, the statistics settings and the budgets, each with the file it came
from, and the plan a new session would get with a reason per capability. It saves those values, each
file's baseline and each capability's choice to the file a form names (:mod:`.forms`, :mod:`.saves`),
checked by the config checker first and never over an edit made since the page loaded (ADR 0129). It
lives in the ``cli`` unit because it shows exactly what ``ptc-plus config show`` and ``ptc-plus
capabilities plan`` print, through the same functions.

The server listens on 127.0.0.1 only and answers a request only when it carries the page's random
token, names the server itself in ``Host`` (DNS rebinding fails) and, when it has an ``Origin`` (a save
must), comes from the page's own origin (cross-site forms and scripts fail): :mod:`.guard`.
"""

from __future__ import annotations

from ptc_plus.cli.settings_page.check import check_page
from ptc_plus.cli.settings_page.guard import RequestGuard
from ptc_plus.cli.settings_page.server import SettingsServer, bind_local

__all__ = ["RequestGuard", "SettingsServer", "bind_local", "check_page"]
