"""The import-layer contract (ADR 0057), checked over the source with :mod:`ast`.

Layers, lowest first; a module may import its own unit and any unit of a
lower layer, never one above it, and never a sibling in the same layer::

    hookspecs < hookspecs.reference < ptc_plus (errors, gate_values, i18n, migration, sandbox_policy) < sdk
      < capabilities < discovery < runtime < preview < config < statistics < gate | plan < adapters.mcp < workflow
      < session < plugin < doors < doors.mcp < demo < evaluation < cli < doors.llm

Across units an import goes through the target's face: its package
``__init__`` (a name listed in ``__all__``) or a module the unit declares
public in :data:`PUBLIC_MODULES`. ``ptc_plus/runtime/worker/`` runs in the
child as a top-level package of its own and imports the standard library
only. Every import counts: module level, inside functions, and under
``TYPE_CHECKING`` (an annotation-only import still couples the two modules).
Dynamic imports (``importlib.import_module``) are not seen.

Runs as a plain test in the default suite, so CI enforces it; the scratch tests
at the end feed the checker deliberately wrong imports to prove it can fail.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ptc_plus", "hookspecs")

LAYERS: tuple[tuple[str, ...], ...] = (
    ("hookspecs",),
    ("hookspecs.reference",),
    ("ptc_plus",),
    ("ptc_plus.sdk",),
    ("ptc_plus.capabilities",),
    ("ptc_plus.discovery",),
    ("ptc_plus.runtime",),
    ("ptc_plus.preview",),
    ("ptc_plus.config",),
    ("ptc_plus.statistics",),
    ("ptc_plus.gate", "ptc_plus.plan"),
    ("ptc_plus.adapters.mcp",),
    ("ptc_plus.workflow",),
    ("ptc_plus.session",),
    ("ptc_plus.plugin",),
    ("ptc_plus.doors",),
    ("ptc_plus.doors.mcp",),
    ("ptc_plus.demo",),
    ("ptc_plus.evaluation",),
    ("ptc_plus.cli",),
    ("ptc_plus.doors.llm",),
)
"""Units, lowest layer first. ``cli`` sits above ``demo`` because ``ptc-plus demo`` runs it. MCP servers as sources
(``adapters.mcp``) sit below the session; the front doors above the plugin: ``doors`` (the embedded host every front
door opens), then ``mcp-serve`` (``doors.mcp``); the llm plugin sits above ``cli`` because it mounts ``ptc-plus
capabilities`` (ADR 0074, 0121): the one import of a package above its own (:func:`upward_edges`).
The evaluation runs whole sessions on the reference host with the plugin, so it sits above the plugin; ``ptc-plus
eval`` runs it (ADR 0079). Discovery searches the catalog and sits just above it (ADR 0110)."""

PUBLIC_MODULES: Mapping[str, frozenset[str]] = {
    # The contract is public module by module (host and plugin authors import its types where they live):
    # its markers, specs, types and services, the message lookup, the one serialization rule set and the
    # workspace access helpers.
    "hookspecs": frozenset(
        {
            "hookspecs.children",
            "hookspecs.i18n",
            "hookspecs.markers",
            "hookspecs.serialization",
            "hookspecs.services",
            "hookspecs.specs",
            "hookspecs.types",
            "hookspecs.workspace_files",
        }
    ),
    # The reference host's demo tools are a package of their own, used by the demo and ``ptc-plus exec``.
    "hookspecs.reference": frozenset({"hookspecs.reference.demo_tools"}),
    # The root package's __init__ holds only the version; errors, the message catalog, the sandbox policy
    # (used by both the runtime and the config, so owned by neither) and the gate's value parsers (used by
    # the gate and the config's tighten-only rules) and the did-you-mean rule (config and CLI) are its shared modules.
    "ptc_plus": frozenset(
        {
            "ptc_plus.errors",
            "ptc_plus.gate_values",
            "ptc_plus.i18n",
            "ptc_plus.migration",
            "ptc_plus.sandbox_policy",
            "ptc_plus.spelling",
        }
    ),
    # The evaluation is public module by module: a task suite imports its task API, ``ptc-plus eval`` the
    # matrix, results, report (one suite's, both suites'), the suites and settings (price sheets, host prompts);
    # its package imports nothing, so reading results starts no engine.
    "ptc_plus.evaluation": frozenset(
        {
            "ptc_plus.evaluation.charts",
            "ptc_plus.evaluation.demo_bill",
            "ptc_plus.evaluation.exchange",
            "ptc_plus.evaluation.host_prompt",
            "ptc_plus.evaluation.loading",
            "ptc_plus.evaluation.matrix",
            "ptc_plus.evaluation.metering",
            "ptc_plus.evaluation.prices",
            "ptc_plus.evaluation.report",
            "ptc_plus.evaluation.results",
            "ptc_plus.evaluation.runner",
            "ptc_plus.evaluation.suite_report",
            "ptc_plus.evaluation.suites",
            "ptc_plus.evaluation.task",
        }
    ),
    # mcp-serve is public module by module: the command imports the MCP SDK's side (``serve``) only when serving.
    "ptc_plus.doors.mcp": frozenset(
        {"ptc_plus.doors.mcp.serve", "ptc_plus.doors.mcp.serve_errors", "ptc_plus.doors.mcp.serve_session"}
    ),
}
"""Modules other units may import besides the unit's own package; each unit's ``__init__`` is always public."""

WORKER = "ptc_plus.runtime.worker"

RANK: Mapping[str, int] = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


@attrs.frozen
class Module:
    name: str
    source: str
    is_package: bool = False


@attrs.frozen
class Edge:
    importer: str
    target: str
    """The module named by the import statement (``from X import y`` → ``X``)."""
    names: tuple[str, ...]
    """The names taken from ``target`` (empty for ``import X``)."""
    line: int
    type_only: bool = False
    """Under ``if TYPE_CHECKING:``: couples the modules, but is never executed."""


def unit_of(module: str) -> str | None:
    """The longest unit that is ``module`` or a package holding it; ``None`` outside our packages."""
    best: str | None = None
    for unit in RANK:
        inside = module.startswith(unit[:-1]) if unit.endswith("*") else module.startswith(unit + ".")
        if (module == unit or inside) and (best is None or len(unit) > len(best)):
            best = unit
    return best


def load_modules(root: Path = ROOT) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            name = ".".join(parts)
            modules[name] = Module(name, path.read_text(encoding="utf-8"), is_package)
    return modules


@functools.cache
def _tree(source: str) -> ast.Module:
    """One parse per source text for the whole run (every check reads every module; a scratch adds one)."""
    return ast.parse(source)


def _type_checking_nodes(tree: ast.AST) -> set[ast.AST]:
    guarded: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            guarded.update(inner for statement in node.body for inner in ast.walk(statement))
    return guarded


def edges(module: Module) -> Iterator[Edge]:
    return iter(_edges(module))


@functools.cache
def _edges(module: Module) -> tuple[Edge, ...]:
    return tuple(_walk_edges(module))


def _walk_edges(module: Module) -> Iterator[Edge]:
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    tree = _tree(module.source)
    type_only = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Edge(module.name, alias.name, (), node.lineno, node in type_only)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            # ``from ptc_plus import discovery``: a name that is itself a unit is an import of that unit's face.
            units = [a.name for a in node.names if f"{target}.{a.name}" in RANK]
            for name in units:
                yield Edge(module.name, f"{target}.{name}", (), node.lineno, node in type_only)
            names = tuple(a.name for a in node.names if a.name not in units)
            if names or not units:
                yield Edge(module.name, target, names, node.lineno, node in type_only)


def declared_all(module: Module) -> frozenset[str] | None:
    """The literal ``__all__`` of a module, or ``None`` if it has none."""
    for node in _tree(module.source).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                return frozenset(ast.literal_eval(node.value))
    return None


def _past_the_face(edge: Edge, target_unit: str, modules: Mapping[str, Module]) -> str | None:
    """Why an import into another unit does not go through that unit's face, or ``None`` if it does."""
    public = {target_unit} | PUBLIC_MODULES.get(target_unit, frozenset())
    if edge.target not in public:
        return f"imports {edge.target} past the face of {target_unit} (use {target_unit} or make the module private)"
    target = modules.get(edge.target)
    exported = declared_all(target) if target is not None else None
    for name in edge.names:
        if f"{edge.target}.{name}" in public:
            continue  # ``from hookspecs import specs``: a public module, taken through its package
        if (name not in exported) if exported is not None else name.startswith("_"):
            return f"imports {edge.target}.{name}, which is not in its __all__"
    return None


def violations(modules: Mapping[str, Module]) -> list[str]:
    """Every import that breaks the layering, the faces or the worker's standard-library-only rule."""
    found: list[str] = []
    for module in modules.values():
        source_unit = unit_of(module.name)
        in_worker = module.name == WORKER or module.name.startswith(WORKER + ".")
        for edge in edges(module):
            where = f"{edge.importer}:{edge.line}"
            top = edge.target.partition(".")[0]
            if in_worker:
                if not (edge.target.startswith(WORKER) or top in sys.stdlib_module_names or top == "__future__"):
                    found.append(
                        f"{where} (worker) imports {edge.target}: the worker imports the standard library only"
                    )
                continue
            target_unit = unit_of(edge.target)
            if target_unit is None or source_unit is None or target_unit == source_unit:
                continue
            if RANK[target_unit] > RANK[source_unit]:
                found.append(f"{where} imports {edge.target}: {target_unit} is above {source_unit}")
            elif RANK[target_unit] == RANK[source_unit]:
                found.append(f"{where} imports {edge.target}: {target_unit} and {source_unit} are siblings")
            elif reason := _past_the_face(edge, target_unit, modules):
                found.append(f"{where} {reason}")
    return sorted(found)


def package_of(unit: str) -> str:
    """The package a unit belongs to: its first two names (``ptc_plus.adapters.mcp`` → ``ptc_plus.adapters``)."""
    return ".".join(unit.removesuffix("*").split(".")[:2])


def upward_edges(modules: Mapping[str, Module]) -> list[str]:
    """Every import from one package into a package above it, each package placed at its lowest unit's layer.

    The layers allow them (a unit of the package sits higher), but such a package is not one layer: what it
    holds must be read as two (ADR 0121).
    """
    place: dict[str, int] = {}
    for unit, rank in RANK.items():
        place[package_of(unit)] = min(rank, place.get(package_of(unit), rank))
    found: list[str] = []
    for module in modules.values():
        source_unit = unit_of(module.name)
        for edge in edges(module):
            target_unit = unit_of(edge.target)
            if source_unit is None or target_unit is None:
                continue
            importer, target = package_of(source_unit), package_of(target_unit)
            if importer != target and place[target] > place[importer]:
                found.append(f"{edge.importer}:{edge.line} imports {edge.target}: {target} is above {importer}")
    return sorted(found)


def import_cycles(modules: Mapping[str, Module], *, type_only: bool = True) -> list[list[str]]:
    """Module-level import cycles (strongly connected components of more than one module).

    ``type_only=False`` leaves out imports under ``TYPE_CHECKING`` (an annotation's back-reference).
    """
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module in modules.values():
        for edge in edges(module):
            if edge.type_only and not type_only:
                continue
            for target in (edge.target, *(f"{edge.target}.{n}" for n in edge.names)):
                # ``from pkg import sub`` depends on the submodule; ``from pkg import name`` on the package's
                # __init__, which is not counted as a cycle with its own submodules (re-exports are its job).
                if target in modules and target != module.name and not _is_parent(target, module.name, modules):
                    graph[module.name].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return cycles


def _is_parent(candidate: str, module: str, modules: Mapping[str, Module]) -> bool:
    return modules[candidate].is_package and module.startswith(candidate + ".")


def _with(scratch: str, source: str) -> dict[str, Module]:
    return {**load_modules(), scratch: Module(scratch, source)}


def test_the_layers_hold() -> None:
    assert violations(load_modules()) == []


def test_only_the_llm_plugin_imports_a_package_above_its_own() -> None:
    # ``llm ptc`` mounts the ``ptc-plus capabilities`` commands (ADR 0074); every other front door sits above
    # what it imports, and MCP servers as sources below the session import nothing above it (ADR 0121).
    found = upward_edges(load_modules())
    print("\n".join(found))
    assert found and all(line.startswith("ptc_plus.doors.llm.") for line in found)
    assert {line.rpartition(": ")[2] for line in found} == {"ptc_plus.cli is above ptc_plus.doors"}


def test_no_module_imports_itself_round_a_cycle() -> None:
    assert import_cycles(load_modules(), type_only=False) == []


def test_no_plugin_module_needs_another_even_for_its_annotations_round_a_cycle() -> None:
    plugin = {name: module for name, module in load_modules().items() if name.startswith("ptc_plus")}
    assert import_cycles(plugin) == []


def test_every_unit_is_a_real_package_or_module() -> None:
    modules = load_modules()
    assert sorted(unit for unit in RANK if unit not in modules and not unit.endswith("*")) == []
    assert all(any(m.startswith(unit[:-1]) for m in modules) for unit in RANK if unit.endswith("*"))
    assert all(public in modules for names in PUBLIC_MODULES.values() for public in names)


def test_scratch_upward_import_is_reported() -> None:
    found = violations(_with("ptc_plus.runtime._scratch", "from ptc_plus.config import PtcConfig\n"))
    assert found == ["ptc_plus.runtime._scratch:1 imports ptc_plus.config: ptc_plus.config is above ptc_plus.runtime"]


def test_scratch_upward_import_of_a_unit_named_through_its_parent_is_reported() -> None:
    found = violations(_with("ptc_plus.capabilities._scratch", "from ptc_plus import discovery\n"))
    assert found == [
        "ptc_plus.capabilities._scratch:1 imports ptc_plus.discovery: ptc_plus.discovery is above ptc_plus.capabilities"
    ]


def test_scratch_sibling_import_is_reported() -> None:
    found = violations(_with("ptc_plus.gate._scratch", "def f():\n    from ptc_plus.plan import compute_plan\n"))
    assert found == ["ptc_plus.gate._scratch:2 imports ptc_plus.plan: ptc_plus.plan and ptc_plus.gate are siblings"]


def test_scratch_import_past_the_face_is_reported() -> None:
    found = violations(_with("ptc_plus.session._scratch", "from ptc_plus.capabilities.cost import measure\n"))
    assert found == [
        "ptc_plus.session._scratch:1 imports ptc_plus.capabilities.cost past the face of ptc_plus.capabilities"
        " (use ptc_plus.capabilities or make the module private)"
    ]


def test_scratch_name_missing_from_all_is_reported() -> None:
    found = violations(_with("ptc_plus.session._scratch", "from ptc_plus.capabilities import _private\n"))
    assert found == ["ptc_plus.session._scratch:1 imports ptc_plus.capabilities._private, which is not in its __all__"]


def test_scratch_worker_import_outside_the_standard_library_is_reported() -> None:
    source = "from __future__ import annotations\nimport json\nfrom . import wire_format\nimport attrs\n"
    found = violations(_with(f"{WORKER}._scratch", source))
    assert found == [f"{WORKER}._scratch:4 (worker) imports attrs: the worker imports the standard library only"]


def test_scratch_cycle_is_reported() -> None:
    modules = _with("ptc_plus.sdk._scratch_a", "from ptc_plus.sdk._scratch_b import x\n")
    modules["ptc_plus.sdk._scratch_b"] = Module("ptc_plus.sdk._scratch_b", "from ptc_plus.sdk import _scratch_a\n")
    assert import_cycles(modules, type_only=False) == [["ptc_plus.sdk._scratch_a", "ptc_plus.sdk._scratch_b"]]


def test_scratch_annotation_only_cycle_is_reported_in_the_strict_check() -> None:
    back_reference = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ptc_plus.sdk._scratch_a import x\n"
    modules = _with("ptc_plus.sdk._scratch_a", "from ptc_plus.sdk._scratch_b import y\n")
    modules["ptc_plus.sdk._scratch_b"] = Module("ptc_plus.sdk._scratch_b", back_reference)
    plugin = {name: module for name, module in modules.items() if name.startswith("ptc_plus")}
    assert import_cycles(plugin) == [["ptc_plus.sdk._scratch_a", "ptc_plus.sdk._scratch_b"]]
    assert import_cycles(plugin, type_only=False) == []
