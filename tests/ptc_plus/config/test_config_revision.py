"""The config revision identifies the effective config, not the file text."""

from __future__ import annotations

import attrs
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptc_plus.config import (
    CapabilityChoice,
    Disclosure,
    GateSection,
    ManagementSection,
    McpSection,
    McpServer,
    PtcConfig,
    StatisticsSection,
    config_revision,
)
from ptc_plus.config.converter import CONVERTER

from .conftest import ConfigFiles

A = """# my workspace
[management]
enabled = true   # turned on for the demo
budget_tokens = 900
baseline = ["host:a", "host:b"]

[capabilities."host:x"]
disclosure = "off"

[capabilities."host:y"]
disclosure = "full"
"""

B = """[capabilities."host:y"]
disclosure = "full"
[capabilities."host:x"]
disclosure = "off"
[management]
baseline = ["host:a", "host:b"]
budget_tokens = 900
enabled = true
"""


def test_same_effective_config_same_revision_whatever_the_layout(files: ConfigFiles) -> None:
    files.write(workspace=A)
    first = files.load()
    files.write(workspace=B)
    second = files.load()
    assert first.config == second.config
    assert first.revision == second.revision
    assert first.revision.startswith("sha256:") and len(first.revision) == len("sha256:") + 64


def test_split_across_files_gives_the_same_revision(files: ConfigFiles) -> None:
    files.write(workspace=A)
    together = files.load().revision
    files.write(
        user='[management]\nenabled = true\nbudget_tokens = 5\n[capabilities."host:x"]\ndisclosure = "off"\n',
        workspace='[management]\nbudget_tokens = 900\nbaseline = ["host:a", "host:b"]\n'
        '[capabilities."host:y"]\ndisclosure = "full"\n',
    )
    assert files.load().revision == together


def test_an_explicit_default_is_the_same_config_as_none(files: ConfigFiles) -> None:
    empty = files.load().revision
    files.write(workspace="[management]\nenabled = true\n[statistics]\nwindow = 20\n")
    assert files.load().revision == empty


def test_any_effective_change_changes_the_revision(files: ConfigFiles) -> None:
    files.write(workspace=A)
    before = files.load().revision
    files.write(workspace=A.replace("budget_tokens = 900", "budget_tokens = 901"))
    assert files.load().revision != before
    files.write(workspace=A.replace('disclosure = "off"', 'disclosure = "on-demand"'))
    assert files.load().revision != before


identities = st.text(alphabet="abcxyz:/-_.", min_size=1, max_size=12)
configs = st.builds(
    PtcConfig,
    management=st.builds(
        ManagementSection,
        enabled=st.booleans(),
        budget_tokens=st.integers(0, 10**6),
        baseline=st.lists(identities, unique=True, max_size=5).map(tuple),
        context_tokens=st.none() | st.integers(1, 10**6),
    ),
    capabilities=st.dictionaries(identities, st.sampled_from(Disclosure).map(lambda d: CapabilityChoice(disclosure=d))),
    statistics=st.builds(
        StatisticsSection,
        enabled=st.booleans(),
        window=st.integers(1, 500),
        min_samples=st.integers(1, 500),
        threshold=st.floats(0, 1),
    ),
    mcp=st.builds(
        McpSection,
        servers=st.dictionaries(
            st.from_regex(r"[a-z0-9_-]{1,6}", fullmatch=True),
            st.builds(
                McpServer,
                command=st.text(alphabet="abc/ .-", min_size=1, max_size=8).filter(str.strip),
                args=st.lists(st.text(max_size=5), max_size=3).map(tuple),
                env=st.dictionaries(st.from_regex(r"[A-Z_]{1,5}", fullmatch=True), st.text(max_size=5), max_size=2),
                cwd=st.none() | st.text(alphabet="ab/.", min_size=1, max_size=5),
                timeout_s=st.floats(0.1, 1000),
                enabled=st.booleans(),
            ),
            max_size=2,
        ),
    ),
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # the round trip, not its speed
@given(configs)
def test_unstructure_structure_round_trip_keeps_config_and_revision(config: PtcConfig) -> None:
    data = CONVERTER.unstructure(config)
    again = CONVERTER.structure(data, PtcConfig)
    assert again == config
    assert config_revision(again) == config_revision(config)
    reordered = dict(reversed(list(data.items())))
    reordered["capabilities"] = dict(reversed(list(data["capabilities"].items())))
    assert config_revision(CONVERTER.structure(reordered, PtcConfig)) == config_revision(config)


gate_text = st.one_of(st.none(), st.text(alphabet="abc-, 0123", max_size=8))


# Each example writes and loads real files: its time is the machine's load, never the point (no deadline).
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(config=configs, mode=gate_text, debug=gate_text)
def test_toml_serialize_then_load_round_trips(
    files: ConfigFiles, config: PtcConfig, mode: str | None, debug: str | None
) -> None:
    config = attrs.evolve(config, gate=GateSection(mode=mode, debug=debug))
    data = CONVERTER.unstructure(config)
    data["gate"] = {k: v for k, v in data["gate"].items() if v is not None}
    data["management"] = {k: v for k, v in data["management"].items() if v is not None}  # TOML has no null
    for server in data["mcp"]["servers"].values():
        if server["cwd"] is None:
            del server["cwd"]
    files.write(workspace=tomlkit.dumps(data))
    loaded = files.load()
    if config.statistics.min_samples > config.statistics.window:
        assert [issue.path for issue in loaded.issues] == ["statistics.min_samples"]
        config = attrs.evolve(config, statistics=attrs.evolve(config.statistics, enabled=False))
    else:
        assert loaded.issues == ()
    assert loaded.config == config
    assert loaded.revision == config_revision(config)
