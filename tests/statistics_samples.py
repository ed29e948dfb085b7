"""Recording hand-made session families over the demo tools, for tests of what reads the statistics."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.capabilities.catalog import Catalog, build_catalog
from ptc_plus.statistics import Evidence, FamilySample, StatisticsStore, schema_revision_of


def demo_catalog(workspace: Path) -> Catalog:
    """The catalog of the reference host's demo tools in ``workspace``."""
    return build_catalog(tools=[d.spec for d in demo_tool_definitions(workspace)])


def record_families(
    store: StatisticsStore,
    workspace: Path,
    families: Iterable[str],
    used: Sequence[str],
    available: Sequence[str] | None = None,
) -> None:
    """Record ``families`` in ``store``: each demo tool available (or only ``available``), ``used`` used."""
    catalog = demo_catalog(workspace)
    for family in families:
        evidence = [
            Evidence(
                identity=c.identity,
                revision=c.revision,
                schema_revision=schema_revision_of(c),
                disclosure="on-demand",
                used=c.identity in used,
            )
            for c in catalog.managed()
            if available is None or c.identity in available
        ]
        sample = FamilySample(
            family_id=family, workspace=str(workspace), plan_config_revision="sha256:t", evidence=evidence
        )
        store.record(sample)
