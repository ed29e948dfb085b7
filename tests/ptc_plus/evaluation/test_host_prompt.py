"""The host system prompt: the size the setting names, deterministic, real instructions, sent in real-model mode."""

from __future__ import annotations

import pytest

from hookspecs.reference.model import AssistantTurn, ModelRequest
from ptc_plus.evaluation.host_prompt import DEFAULT_SETTING, SETTINGS, HostPromptModel, HostPromptTooLarge, host_prompt
from ptc_plus.evaluation.metering import o200k_counter


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_each_setting_gives_its_size_and_the_same_text_every_time(setting: str) -> None:
    counter = o200k_counter()
    size = SETTINGS[setting]
    text = host_prompt(size, counter.count)
    assert counter.count(text) == size
    assert host_prompt(size, counter.count) == text
    if size:
        assert text.startswith("You are a software engineering agent")
        # Real instructions, not filler: no paragraph repeats, none is placeholder text.
        paragraphs = text.split("\n\n")
        assert len(set(paragraphs)) == len(paragraphs)
        assert "lorem" not in text.lower()


def test_the_default_is_3k_and_the_smaller_prompt_is_a_prefix_of_the_larger() -> None:
    counter = o200k_counter()
    assert DEFAULT_SETTING == "3k" and SETTINGS == {"none": 0, "3k": 3000, "15k": 15000}
    small, large = (host_prompt(SETTINGS[s], counter.count) for s in ("3k", "15k"))
    assert large.startswith(small.rsplit(" ", 1)[0])


def test_asking_for_more_text_than_there_is_says_so() -> None:
    with pytest.raises(HostPromptTooLarge):
        host_prompt(10**6, lambda text: len(text) // 100)


class Echo:
    route = "echo"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []
        self.usage = ["u1"]

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        self.requests.append(request)
        return AssistantTurn(text="ok")


@pytest.mark.asyncio
async def test_real_model_mode_sends_the_prompt_before_the_hosts_system_text() -> None:
    inner = Echo()
    model = HostPromptModel(inner, "HOST PROMPT")
    await model.complete(ModelRequest(system="the host's own", messages=(), tools=()))
    assert inner.requests[0].system == "HOST PROMPT\n\nthe host's own"
    assert model.route == "echo" and model.usage == ["u1"]  # the recording model reads the route's usage
