"""``ptc-plus plugins``: the plugins a reference host loads, in load order, with their hooks."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import orjson

from hookspecs.reference import HostBuiltins, ReferenceHost
from ptc_plus.i18n import message


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("plugins", help=message("cli.plugins.help"))
    parser.add_argument("--json", action="store_true", help=message("cli.json"))
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    # The same loading path a reference host uses, with its built-ins first.
    with tempfile.TemporaryDirectory() as tmp:
        host = ReferenceHost(workspace=Path(tmp))
        pm = host.facade.pm
    rows: list[dict[str, Any]] = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:  # named in the blocklist: registered as blocked, never loaded
            rows.append({"name": name, "builtin": False, "distribution": "", "hooks": [], "blocked": True})
            continue
        hooks = sorted(h.name for h in pm.get_hookcallers(plugin) or [])
        dist = next((d.project_name for p, d in pm.list_plugin_distinfo() if p is plugin), "")
        rows.append(
            {
                "name": name,
                "builtin": isinstance(plugin, HostBuiltins),
                "distribution": dist,
                "hooks": hooks,
                "blocked": False,
            }
        )
    if args.json:
        print(orjson.dumps(rows).decode())
    else:
        for row in rows:
            if row["blocked"]:
                print(f"{row['name']} ({message('cli.plugins.blocked')})")
                continue
            origin = message("cli.plugins.builtin") if row["builtin"] else row["distribution"]
            print(f"{row['name']} ({origin})")
            for hook in row["hooks"]:
                print(f"    {hook}")
    return 0
