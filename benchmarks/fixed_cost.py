"""What every request carries before the conversation, per style and catalog size (issue 28 item 2, ADR 0107).

Run: .venv/bin/python benchmarks/fixed_cost.py [--catalog N ...] [--output PATH]
Writes benchmarks/results/fixed_cost.json.

The *fixed part* of a request is everything a style sends before the user's
first message: the host's system prompt, the system text (the host's own
line and, in code mode, PTC Plus's bootstrap section), every tool schema
(``run_code``, ``read_spill``, ``tool_search``, the direct tools of the
``both`` presentation, tool search's always-loaded tools) and the context
messages sent ahead of the conversation (code mode's catalog message: its
header, the full contracts and the on-demand navigation). It is byte-stable
for a session (SPEC §1), so it is what a provider's prompt cache keeps, and
what the first request of every task pays uncached.

Each style's fixed part is read from the first request of a real run of the
one-call task (``t09-one-call``) on the reference host, exactly as the token
evaluation sends it, and counted with the evaluation's own meter (o200k
tokens, counted per request part; the 3k host prompt). The mature styles get
the warm-up families' statistics, as ``ptc-plus eval`` gives them. The parts
below are counted one by one; a part's pieces (the bootstrap's sentences, the
catalog's header, contracts and navigation) are counted apart too, so their
sum may differ from the part's own count by a few tokens at the seams.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import re
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this directory comes first on sys.path, where benchmarks/mcp.py would shadow the MCP SDK.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from hookspecs.reference import ModelRequest  # noqa: E402
from ptc_plus.evaluation.host_prompt import DEFAULT_SETTING, SETTINGS, host_prompt  # noqa: E402
from ptc_plus.evaluation.loading import load_suite  # noqa: E402
from ptc_plus.evaluation.matrix import WARMUP_FAMILIES  # noqa: E402
from ptc_plus.evaluation.mcp_bridge import McpBridge  # noqa: E402
from ptc_plus.evaluation.metering import UNIT, Meter, o200k_counter  # noqa: E402
from ptc_plus.evaluation.runner import run_task, warm_up  # noqa: E402
from ptc_plus.evaluation.styles import STATISTICS_STYLES  # noqa: E402
from ptc_plus.evaluation.task import Style  # noqa: E402

CATALOGS = (20, 200, 2000)
STYLES = (
    Style.NATIVE,
    Style.TOOL_SEARCH,
    Style.TOOL_SEARCH_MATURE,
    Style.PTC,
    Style.PTC_SEARCH,
    Style.PTC_PLUS_COLD,
    Style.PTC_PLUS_MATURE,
    Style.PTC_PLUS_BOTH,
)
TASK = "t09-one-call"
OUT = ROOT / "benchmarks" / "results" / "fixed_cost.json"
BOOTSTRAP_START = "Code mode:"
"""Where PTC Plus's bootstrap section starts in the system text (after the host's own line)."""
NAVIGATION_START = "# Available on demand"
CONTEXT_LIMIT = 128_000
"""The evaluation's default context: a fixed part beyond it is reported, its task would not be runnable."""


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.)])\s+(?=[A-Z`])", text.strip()) if s]


def split_system(system: str, meter: Meter) -> dict[str, Any]:
    """The system text: the host's own line, the bootstrap, and the bootstrap's discovery sentences apart."""
    start = system.find(BOOTSTRAP_START)
    if start < 0:
        return {"tokens": meter.count(system), "host_line": meter.count(system), "bootstrap": 0}
    bootstrap = system[start:]
    discovery = [s for s in _sentences(bootstrap) if "capabilit" in s]
    return {
        "tokens": meter.count(system),
        "host_line": meter.count(system[:start].rstrip()),
        "bootstrap": meter.count(bootstrap),
        "bootstrap_discovery_sentences": sum(meter.count(s) for s in discovery),
    }


def split_catalog(text: str, meter: Meter) -> dict[str, Any]:
    """A catalog message: its header lines, the full contracts and the on-demand navigation."""
    lines = text.splitlines()
    header = [line for line in lines[:3] if line.startswith("# ") and not line.startswith(NAVIGATION_START)]
    nav_from = next((i for i, line in enumerate(lines) if line.startswith(NAVIGATION_START)), None)
    navigation: list[str] = []
    if nav_from is not None:
        end = nav_from
        while end < len(lines) and lines[end].startswith("# "):
            end += 1
        navigation = lines[nav_from:end]
    rest = [
        line for i, line in enumerate(lines) if line not in header and not (navigation and _in(i, lines, navigation))
    ]
    contracts = "\n".join(rest).strip()
    listed = sum(1 for line in navigation if line.startswith("# - "))
    return {
        "tokens": meter.count(text),
        "header": meter.count("\n".join(header)),
        "full_contracts": meter.count(contracts) if contracts else 0,
        "full_contracts_shown": len(re.findall(r"^\s*(?:async )?def ", contracts, flags=re.MULTILINE)),
        "navigation": meter.count("\n".join(navigation)) if navigation else 0,
        "navigation_listed": listed,
    }


def _in(index: int, lines: list[str], block: list[str]) -> bool:
    start = lines.index(block[0])
    return start <= index < start + len(block)


def fixed_part(request: ModelRequest, meter: Meter, host: str) -> dict[str, Any]:
    """The breakdown of ``request``'s parts before the first user message."""
    tools: dict[str, int] = {}
    for spec in request.tools:
        tools[spec.name] = meter.count(meter.parts(ModelRequest(system="", tools=(spec,), messages=()))[-1])
    before_user: list[dict[str, Any]] = []
    for message in request.messages:
        if message.get("role") == "user":
            break
        before_user.append(message)
    catalog = [m for m in before_user if "Capability catalog" in str(m.get("content") or "")]
    messages_tokens = sum(
        meter.count(meter.parts(ModelRequest(system="", tools=(), messages=(m,)))[-1]) for m in before_user
    )
    system = split_system(request.system, meter)
    host_tokens = meter.count(host) if host else 0
    grouped = {
        "run_code": tools.get("run_code", 0),
        "read_spill": tools.get("read_spill", 0),
        "tool_search": tools.get("tool_search", 0),
        "other_tools": sum(v for k, v in tools.items() if k not in ("run_code", "read_spill", "tool_search")),
        "other_tools_count": sum(1 for k in tools if k not in ("run_code", "read_spill", "tool_search")),
    }
    total = host_tokens + system["tokens"] + sum(tools.values()) + messages_tokens
    return {
        "host_prompt": host_tokens,
        "system": system,
        "tools": grouped,
        "messages_before_user": messages_tokens,
        "catalog": split_catalog(str(catalog[0]["content"]), meter) if catalog else None,
        "total": total,
        "beyond_host_prompt": total - host_tokens,
        "fits_context": total <= CONTEXT_LIMIT,
    }


async def measure(catalogs: tuple[int, ...]) -> dict[str, Any]:
    suite = load_suite(ROOT / "benchmarks" / "tasks")
    task = next(t for t in suite.tasks if t.id == TASK)
    counter = o200k_counter()
    host = host_prompt(SETTINGS[DEFAULT_SETTING], counter.count)
    per_catalog: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ptc-plus-fixed-cost-") as scratch:
        workdir = Path(scratch)
        meter = Meter(counter, host_prompt=host, run_root=workdir)
        async with McpBridge.time_server() as bridge:
            for catalog in catalogs:
                print(f"catalog {catalog}: warm-up ({WARMUP_FAMILIES} families)", file=sys.stderr)
                store = await warm_up(suite, catalog, workdir=workdir, families=WARMUP_FAMILIES, mcp=bridge)
                kept = workdir / f"statistics-{catalog}.json"
                kept.write_bytes(store.read_bytes())
                entry: dict[str, Any] = {}
                for style in STYLES:
                    print(f"catalog {catalog}: {style.value}", file=sys.stderr)
                    result = await run_task(
                        suite,
                        task,
                        style,
                        catalog,
                        workdir=workdir,
                        mcp=bridge,
                        statistics=kept if style in STATISTICS_STYLES else None,
                        context_tokens=10**9,  # the fixed part is measured even where the task is not runnable
                        meter=meter,
                    )
                    entry[style.value] = fixed_part(result.exchanges[0].request, meter, host)
                per_catalog[str(catalog)] = entry
    return per_catalog


def summary(per_catalog: dict[str, Any]) -> dict[str, Any]:
    """Per catalog size: each code style's fixed part beyond the host prompt, and its excess over tool search's."""
    found: dict[str, Any] = {}
    for catalog, entry in per_catalog.items():
        search = entry[Style.TOOL_SEARCH.value]["beyond_host_prompt"]
        found[catalog] = {
            style: {
                "beyond_host_prompt": row["beyond_host_prompt"],
                "over_tool_search": row["beyond_host_prompt"] - search,
            }
            for style, row in entry.items()
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--catalog", type=int, action="append", help="catalog sizes (default: 20 200 2000)")
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args()
    per_catalog = asyncio.run(measure(tuple(args.catalog or CATALOGS)))
    result = {
        "version": 1,
        "python": platform.python_version(),
        "measured_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "unit": UNIT,
        "host_prompt": DEFAULT_SETTING,
        "task": TASK,
        "summary": summary(per_catalog),
        "catalogs": per_catalog,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(result["summary"], option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
