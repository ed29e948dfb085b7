"""The scripted policy (ADR 0094): one task plan per style, decided from what the requests carry. Runs are real
(reference host, programs in bubblewrap) on the small plan suite; the failure paths use synthetic requests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from hookspecs.reference.model import ModelRequest
from hookspecs.types import ToolSpec
from ptc_plus.evaluation.driver import ExchangeLog, SessionIds, contract_shown
from ptc_plus.evaluation.errors import ContextExceeded, NeedNotFound, StepFailed
from ptc_plus.evaluation.exchange import RunResult
from ptc_plus.evaluation.matrix import record_of
from ptc_plus.evaluation.metering import Meter
from ptc_plus.evaluation.policy import PlanDriver
from ptc_plus.evaluation.programs import name_words
from ptc_plus.evaluation.results import NOT_RUNNABLE, RAN
from ptc_plus.evaluation.runner import Parameters, run_task, warm_up
from ptc_plus.evaluation.task import Style, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn, dependencies, derive, indexed_fields
from ptc_plus.evaluation.tool_search import most_used_tools
from ptc_plus.sdk import LearnedResult, learned_functions, render_tool
from ptc_plus.statistics import derive_shape
from tests.ptc_plus.evaluation.plan_suite import (
    AGGREGATE,
    CHILD,
    DERIVED,
    FLAKY,
    GROSS,
    IDS,
    INDEPENDENT,
    ORDERS,
    SUITE,
    SUMMARY,
)

CATALOG = 20
SMALL = Parameters(budget_tokens=40)
"""Less than any two contracts: a cold plan shows almost nothing in full, so programs must discover."""


def assert_passed(result: RunResult) -> None:
    assert result.error == "" and result.not_runnable == ""
    assert result.verdict == Verdict(passed=True), result.verdict.reason


def codes(result: RunResult) -> list[str]:
    return [str(c.arguments["code"]) for e in result.exchanges for c in e.answer.tool_calls if c.tool == "run_code"]


# -- native ---------------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_native_sends_independent_calls_in_one_response(tmp_path: Path) -> None:
    result = await run_task(SUITE, INDEPENDENT, Style.NATIVE, CATALOG, workdir=tmp_path)
    assert_passed(result)
    first = result.exchanges[0].answer
    assert sorted(c.tool for c in first.tool_calls) == ["get_customer", "order_status"]
    assert len(result.exchanges) == 2  # both calls, then the answer


@pytest.mark.asyncio
async def test_native_fans_out_in_one_response_and_the_sequential_bound_does_not(tmp_path: Path) -> None:
    batched = await run_task(SUITE, AGGREGATE, Style.NATIVE, CATALOG, workdir=tmp_path)
    assert_passed(batched)
    calls = batched.exchanges[0].answer.tool_calls
    assert [c.arguments for c in calls] == [{"order_id": i} for i in IDS]
    sequential = await run_task(SUITE, AGGREGATE, Style.NATIVE_SEQUENTIAL, CATALOG, workdir=tmp_path)
    assert_passed(sequential)
    assert [len(e.answer.tool_calls) for e in sequential.exchanges] == [1] * len(IDS) + [0]


@pytest.mark.asyncio
async def test_native_resends_a_failed_call_within_the_steps_retries(tmp_path: Path) -> None:
    result = await run_task(SUITE, FLAKY, Style.NATIVE, CATALOG, workdir=tmp_path)
    assert_passed(result)
    sent = [c.tool for e in result.exchanges for c in e.answer.tool_calls]
    assert sent == ["warehouse_stock", "warehouse_stock"]


@pytest.mark.asyncio
async def test_native_works_a_derived_value_out_and_its_next_call_carries_it(tmp_path: Path) -> None:
    result = await run_task(SUITE, DERIVED, Style.NATIVE, CATALOG, workdir=tmp_path)
    assert_passed(result)
    fetched, noted, answered = (e.answer for e in result.exchanges)
    assert [c.arguments for c in fetched.tool_calls] == [{"order_id": i} for i in IDS]
    delivered = sum(o["status"] == "delivered" for o in ORDERS.values())
    assert [(c.tool, c.arguments) for c in noted.tool_calls] == [
        ("add_note", {"text": f"{delivered} of {len(IDS)} delivered"})
    ]
    assert answered.text and not answered.tool_calls


# -- native + tool search -------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_tool_search_searches_every_missing_need_in_one_step_and_the_cache_survives(tmp_path: Path) -> None:
    result = await run_task(SUITE, INDEPENDENT, Style.TOOL_SEARCH, CATALOG, workdir=tmp_path)
    assert_passed(result)
    searches = result.exchanges[0].answer.tool_calls
    assert [(c.tool, c.arguments) for c in searches] == [
        ("tool_search", {"query": "delivery status of an order"}),
        ("tool_search", {"query": "the customer's country"}),
    ]
    # The loaded definitions are in the conversation (the search results), not added to the tools list:
    after = result.exchanges[1].request
    assert [t.name for t in after.tools] == ["tool_search"]
    loaded = [orjson.loads(m["content"]) for m in after.messages if m.get("role") == "tool"]
    names = {d["name"] for found in loaded for d in found["loaded"]}
    assert {"order_status", "get_customer"} <= names
    assert all("input_schema" in d for found in loaded for d in found["loaded"])
    # ... so the whole first request is the cached prefix of the second (these requests are shorter than a
    # provider's minimum cacheable prefix: metered without one, only the prefix rule is checked here).
    meters = Meter(min_prefix=0).meter(result.exchanges).requests
    assert meters[1].input_cached == meters[0].input
    assert meters[2].input_cached == meters[1].input


def test_tool_search_tries_the_tools_name_then_fails_the_need() -> None:
    plan = TaskPlan(
        turns=(
            Turn(
                prompt="q",
                steps=(Step(id="s", need="vat please", tool="tax_rate", arguments={"country": "NL"}),),
                reads=(Ref("s"),),
                answer=lambda values: str(values),
            ),
        )
    )
    driver = PlanDriver(task_id="t", plan=plan, style=Style.TOOL_SEARCH, log=ExchangeLog(), ids=SessionIds("s-1"))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    queries = []
    with pytest.raises(NeedNotFound):
        for _ in range(3):
            answer = driver_step(driver, messages, tools=("tool_search",))
            call = answer.tool_calls[0]
            queries.append(call.arguments["query"])
            messages += [
                {"role": "assistant", "content": "", "tool_calls": [{"id": call.call_id, "name": call.tool}]},
                {"role": "tool", "tool_call_id": call.call_id, "content": '{"already_loaded":[],"loaded":[]}'},
            ]
    assert queries == ["vat please", name_words("tax_rate")] == ["vat please", "tax rate"]


def driver_step(
    driver: PlanDriver, messages: list[dict[str, Any]], *, tools: tuple[str, ...] = (), system: str = ""
) -> Any:
    request = ModelRequest(
        system=system, messages=tuple(messages), tools=tuple(ToolSpec(name=n, description=n) for n in tools)
    )
    return driver._step(request)


@pytest.mark.asyncio
async def test_mature_tool_search_always_loads_the_warm_ups_most_used_tools(tmp_path: Path) -> None:
    statistics = await warm_up(SUITE, CATALOG, workdir=tmp_path / "warm", families=2)
    core = most_used_tools(statistics)
    assert 0 < len(core) <= 5
    assert set(core) <= {"get_order", "get_customer", "tax_rate", "order_status"}
    result = await run_task(
        SUITE, INDEPENDENT, Style.TOOL_SEARCH_MATURE, CATALOG, workdir=tmp_path, statistics=statistics
    )
    assert_passed(result)
    assert [t.name for t in result.exchanges[0].request.tools] == ["tool_search", *core]
    # An always-loaded tool is called at once; only the others are searched for.
    first = [c.tool for c in result.exchanges[0].answer.tool_calls]
    needed = ["order_status", "get_customer"]
    assert sorted(first) == sorted(
        [t for t in needed if t in core] + ["tool_search"] * sum(t not in core for t in needed)
    )


# -- code styles ------------------------------------------------------------------------------------------------


def called_tools(code: str) -> set[str]:
    return set(re.findall(r"tools\.(\w+)\(", code))


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
@pytest.mark.parametrize("style", [Style.PTC_PLUS_COLD, Style.PTC_SEARCH], ids=lambda s: s.value)
async def test_a_program_uses_only_contracts_its_request_showed(tmp_path: Path, style: Style) -> None:
    result = await run_task(SUITE, GROSS, style, CATALOG, workdir=tmp_path, parameters=SMALL)
    assert_passed(result)
    # The contracts were not shown at first: the model paid a discovery round before any program used them.
    first = result.exchanges[0]
    assert not any(contract_shown(first.request, t) for t in ("get_order", "get_customer", "tax_rate"))
    assert "capabilities.search" in str(first.answer.tool_calls[0].arguments["code"])
    for exchange in result.exchanges[1:]:
        for call in exchange.answer.tool_calls:
            for used in called_tools(str(call.arguments["code"])):
                text = exchange.request.system + "".join(str(m.get("content")) for m in exchange.request.messages)
                assert f"async def {used}(" in text, f"{used} used without its contract"


def test_a_contract_no_round_shows_fails_the_run_after_search_search_inspect() -> None:
    plan = TaskPlan(
        turns=(
            Turn(
                prompt="q",
                steps=(Step(id="s", need="vat please", tool="tax_rate", arguments={"country": "NL"}),),
                reads=(Ref("s"),),
                answer=lambda values: str(values),
            ),
        )
    )
    log = ExchangeLog()
    driver = PlanDriver(task_id="t", plan=plan, style=Style.PTC_PLUS_COLD, log=log, ids=SessionIds("s-1"))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    sent = []
    with pytest.raises(NeedNotFound):
        for _ in range(4):
            call = driver_step(driver, messages, tools=("run_code",), system="no stubs here").tool_calls[0]
            sent.append(call.arguments["code"])
            envelope = '{"calls":0,"logs":[],"notes":[],"value":{"expanded":[]}}'
            messages += [
                {"role": "assistant", "content": "", "tool_calls": [{"id": call.call_id, "name": "run_code"}]},
                {"role": "tool", "tool_call_id": call.call_id, "content": envelope},
            ]
    brief = "return {'found': [c['name'] for c in a['expanded']], 'candidates': a.get('candidates', [])}"
    assert sent == [
        f"a = await capabilities.search('vat please')\n{brief}",
        f"a = await capabilities.search('tax rate')\n{brief}",
        f"a = await capabilities.inspect(['tax_rate'])\n{brief}",
    ]
    assert not any("tools.tax_rate" in code for code in sent)  # never a program on a contract it never received


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_program_probes_a_schema_less_result_before_indexing_into_it(tmp_path: Path) -> None:
    result = await run_task(SUITE, GROSS, Style.PTC, CATALOG, workdir=tmp_path)
    assert_passed(result)
    programs = codes(result)
    # get_order, get_customer and tax_rate have no output schema: each program stops at the next field it
    # would read, returns the raw result, and the next program pastes the value it saw.
    assert programs == [
        "v_order = await tools.get_order(order_id='o-04')\nreturn {'order': v_order}",
        "v_customer = await tools.get_customer(customer_id='c-1')\nreturn {'customer': v_customer}",
        "v_tax = await tools.tax_rate(country='DE')\nreturn {'tax': v_tax}",
    ]


def _order_stub(learned: bool) -> str:
    """``get_order``'s contract as the SDK renders it: with the shape its results taught (ADR 0102), or bare."""
    spec = ToolSpec(
        name="get_order",
        description="Get one order by its id.",
        source="host:get_order",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    )
    shape = derive_shape({"id": "o-04", "customer_id": "c-1", "total": 40.0, "status": "open"})
    rendered = render_tool(
        spec, learned=LearnedResult(schema=shape, results=3, since="2026-12-01") if learned else None
    )
    return "\n\n".join([*(t.text for t in rendered.types), rendered.stub])


def _customer_plan() -> TaskPlan:
    return TaskPlan(
        turns=(
            Turn(
                prompt="q",
                steps=(
                    Step(id="order", need="n", tool="get_order", arguments={"order_id": "o-04"}),
                    Step(
                        id="who",
                        need="n",
                        tool="get_customer",
                        arguments={"customer_id": Ref("order", ("customer_id",))},
                    ),
                ),
                reads=(Ref("who"),),
                answer=lambda values: str(values),
            ),
        )
    )


CUSTOMER_STUB = "async def get_customer(*, customer_id: str) -> Any:"


def test_a_learned_shape_the_request_shows_spares_the_probe_and_one_it_does_not_show_does_not() -> None:
    def first_program(system: str, *, pasted: str = "") -> str:
        driver = PlanDriver(task_id="t", plan=_customer_plan(), style=Style.PTC_PLUS_MATURE, log=ExchangeLog())
        messages = [{"role": "user", "content": pasted + "q"}]
        return str(driver_step(driver, messages, tools=("run_code",), system=system).tool_calls[0].arguments["code"])

    bare, learned = _order_stub(False), _order_stub(True)
    assert "-> Any" in bare and "-> GetOrderResult" in learned and learned_functions(learned) == {"get_order"}
    # No shape shown: the program stops before the step that indexes get_order's result and returns it raw.
    probing = first_program(f"{bare}\n\n{CUSTOMER_STUB}")
    assert probing == "v_order = await tools.get_order(order_id='o-04')\nreturn {'order': v_order}"
    # The contract states the learned shape: one program runs both steps, indexing the result it never saw.
    assert first_program(f"{learned}\n\n{CUSTOMER_STUB}") == (
        "v_order = await tools.get_order(order_id='o-04')\n"
        "v_who = await tools.get_customer(customer_id=v_order['customer_id'])\n"
        "return {'who': v_who}"
    )
    # The text is what counts, and only as a contract: the same stub pasted in the user's message shows nothing.
    assert first_program(f"{bare}\n\n{CUSTOMER_STUB}", pasted=learned + "\n\n") == probing


def test_a_learned_shape_in_a_discovery_answer_counts_as_the_contract_the_model_read() -> None:
    driver = PlanDriver(task_id="t", plan=_customer_plan(), style=Style.PTC_PLUS_MATURE, log=ExchangeLog())
    messages: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    search = driver_step(driver, messages, tools=("run_code",), system="no stubs here").tool_calls[0]
    assert "capabilities.search" in str(search.arguments["code"])
    # run_code's envelope is JSON: the stubs' line breaks are escaped in the raw content the model reads.
    found = {"expanded": [{"name": "get_order", "contract": _order_stub(True)}, {"contract": CUSTOMER_STUB}]}
    envelope = orjson.dumps({"calls": 0, "logs": [], "notes": [], "value": found}).decode()
    messages += [
        {"role": "assistant", "content": "", "tool_calls": [{"id": search.call_id, "name": "run_code"}]},
        {"role": "tool", "tool_call_id": search.call_id, "content": envelope},
    ]
    code = str(
        driver_step(driver, messages, tools=("run_code",), system="no stubs here").tool_calls[0].arguments["code"]
    )
    assert "tools.get_customer(customer_id=v_order['customer_id'])" in code


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_mature_programs_use_the_shapes_the_warm_up_learned_where_cold_ones_probe(tmp_path: Path) -> None:
    statistics = await warm_up(SUITE, CATALOG, workdir=tmp_path / "warm", families=2)
    cold = await run_task(SUITE, GROSS, Style.PTC_PLUS_COLD, CATALOG, workdir=tmp_path)
    assert_passed(cold)
    assert len(codes(cold)) == 3  # no shape shown: each program stops at the next field it would read
    mature = await run_task(SUITE, GROSS, Style.PTC_PLUS_MATURE, CATALOG, workdir=tmp_path, statistics=statistics)
    assert_passed(mature)
    first = mature.exchanges[0].request
    contracts = [first.system, *(str(m.get("content")) for m in first.messages if m.get("role") == "system")]
    assert {"get_order", "get_customer", "tax_rate"} <= set().union(*map(learned_functions, contracts))
    # The warm-up taught the three shapes: one program indexes all three results it never saw.
    assert codes(mature) == [
        "v_order = await tools.get_order(order_id='o-04')\n"
        "v_customer = await tools.get_customer(customer_id=v_order['customer_id'])\n"
        "v_tax = await tools.tax_rate(country=v_customer['country'])\n"
        "return {'order_total': v_order['total'], 'customer_country': v_customer['country'], "
        "'tax_standard_rate': v_tax['standard_rate']}"
    ]
    assert len(mature.exchanges) == 2 < len(cold.exchanges) == 4


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_program_gathers_independent_steps_and_indexes_a_declared_output(tmp_path: Path) -> None:
    result = await run_task(SUITE, INDEPENDENT, Style.PTC, CATALOG, workdir=tmp_path)
    assert_passed(result)
    assert codes(result) == [
        "import asyncio\nv_status, v_who = await asyncio.gather(tools.order_status(order_id='o-03'), "
        "tools.get_customer(customer_id='c-1'))\nreturn {'status_status': v_status['status'], 'who': v_who}"
    ]


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_program_retries_a_flaky_call_and_fans_out_gathered(tmp_path: Path) -> None:
    flaky = await run_task(SUITE, FLAKY, Style.PTC, CATALOG, workdir=tmp_path)
    assert_passed(flaky)
    assert "retry(lambda: tools.warehouse_stock(product_id='p-1'), 2)" in codes(flaky)[0]
    fan = await run_task(SUITE, AGGREGATE, Style.PTC, CATALOG, workdir=tmp_path)
    assert_passed(fan)
    assert codes(fan)[0].startswith("import asyncio\nv_orders = await asyncio.gather(*(tools.get_order(order_id=item)")


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
@pytest.mark.parametrize("style", [Style.NATIVE, Style.PTC_PLUS_COLD], ids=lambda s: s.value)
async def test_a_child_plan_runs_in_the_child_session(tmp_path: Path, style: Style) -> None:
    result = await run_task(SUITE, CHILD, style, CATALOG, workdir=tmp_path, parameters=SMALL)
    assert_passed(result)
    children = {e.session_id for e in result.exchanges if e.parent_session_id is not None}
    assert len(children) == 1


def test_a_failed_program_is_a_failed_step() -> None:
    plan = TaskPlan(
        turns=(
            Turn(
                prompt="q",
                steps=(Step(id="s", need="n", tool="get_order", arguments={"order_id": "x"}),),
                reads=(Ref("s"),),
                answer=lambda values: str(values),
            ),
        )
    )
    driver = PlanDriver(task_id="t", plan=plan, style=Style.PTC, log=ExchangeLog(), ids=SessionIds("s-1"))
    stub = "async def get_order(*, order_id: str) -> Any:"
    call = driver_step(driver, [{"role": "user", "content": "q"}], system=stub).tool_calls[0]
    failed = '{"error":"PTC-3001","message":"boom"}'
    with pytest.raises(StepFailed):
        driver_step(
            driver,
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": call.call_id, "name": "run_code"}]},
                {"role": "tool", "tool_call_id": call.call_id, "content": failed},
            ],
            system=stub,
        )


def _delivered_ids(orders: list[dict[str, Any]]) -> list[str]:
    return [order["id"] for order in orders if order.get("status") == "delivered"]


def _how_many(orders: list[Any]) -> int:
    return len(orders)


def test_a_derived_value_depends_on_every_source_and_its_code_shows_the_fields_it_indexes() -> None:
    value = derive((Ref("a", ("rows",)), Ref("b"), Ref("c", (0,))), _delivered_ids)
    step = Step(id="s", need="n", tool="t", arguments={"ids": value}, after=("z",))
    assert dependencies(step) == {"a", "b", "c", "z"}
    assert dependencies(Step(id="e", need="n", tool="t", each=value)) == {"a", "b", "c"}
    assert value.code.startswith("def _delivered_ids(orders):") and "list[" not in value.code
    assert indexed_fields(value.code) == {"id", "status"}
    assert indexed_fields(derive(Ref("a"), _how_many).code) == frozenset()


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_program_probes_one_item_before_code_indexes_a_fan_out_then_computes_in_the_program(
    tmp_path: Path,
) -> None:
    result = await run_task(SUITE, DERIVED, Style.PTC, CATALOG, workdir=tmp_path)
    assert_passed(result)
    probe, run = codes(result)
    # get_order has no output schema and the derived code reads order["status"]: one call shows the shape ...
    assert probe == f"item = {IDS[0]!r}\nreturn await tools.get_order(order_id=item)"
    # ... then one program fetches all, carries both functions, and returns only what the model needs.
    assert run.count("def _summary(orders):") == 1 and run.count("def _delivered_revenue(orders):") == 1
    assert "tools.add_note(text=_summary(v_orders))" in run
    assert run.endswith("return {'delivered_revenue_orders': _delivered_revenue(v_orders)}")
    assert len(result.exchanges) == 3  # probe, program, answer: the 12 orders never enter the context
    assert SUMMARY.name == "_summary"


def _net_total(order: dict[str, Any]) -> float:
    return order["total"]


def test_a_previewed_raw_result_shows_its_shape_and_the_next_program_works_the_value_out_inside() -> None:
    value = derive(Ref("s"), _net_total)
    plan = TaskPlan(
        turns=(
            Turn(
                prompt="q",
                steps=(Step(id="s", need="n", tool="get_order", arguments={"order_id": "o-1"}),),
                reads=(value,),
                answer=lambda values: f"total {values[0]}",
            ),
        )
    )
    driver = PlanDriver(task_id="t", plan=plan, style=Style.PTC, log=ExchangeLog(), ids=SessionIds("s-1"))
    stub = "async def get_order(*, order_id: str) -> Any:"
    messages: list[dict[str, Any]] = [{"role": "user", "content": "q"}]

    def answer_with(content: str) -> Any:
        call = driver_step(driver, messages, system=stub).tool_calls[0]
        messages.extend(
            [
                {"role": "assistant", "content": "", "tool_calls": [{"id": call.call_id, "name": "run_code"}]},
                {"role": "tool", "tool_call_id": call.call_id, "content": content},
            ]
        )
        return call

    # get_order has no output schema: the first program returns the raw result, too large, so the host previews it.
    first = answer_with('[preview: 41,000 tokens, spill-0001] {"id": "o-1", "total": 10.5, "lines": [')
    assert first.arguments["code"].endswith("return {'s': v_s}")
    envelope = '{"calls":1,"logs":[],"notes":[],"value":{"net_total_s":10.5}}'
    second = answer_with(envelope)
    assert "def _net_total(order):" in second.arguments["code"]
    assert second.arguments["code"].endswith("return {'net_total_s': _net_total(v_s)}")
    assert driver_step(driver, messages, system=stub).text == "total 10.5"
    # A preview that shows no new shape cannot help: the run fails.
    again = PlanDriver(task_id="t", plan=plan, style=Style.PTC, log=ExchangeLog(), ids=SessionIds("s-2"))
    driver = again
    messages[:] = [{"role": "user", "content": "q"}]
    answer_with("[preview] {")
    with pytest.raises(StepFailed):
        answer_with("[preview] {")
        driver_step(driver, messages, system=stub)


def test_both_calls_directly_and_after_a_preview_runs_the_step_again_in_a_program() -> None:
    plan = TaskPlan(
        turns=(
            Turn(
                prompt="q",
                steps=(Step(id="s", need="n", tool="get_order", arguments={"order_id": "o-1"}),),
                reads=(derive(Ref("s"), _net_total),),
                answer=lambda values: f"total {values[0]}",
            ),
        )
    )
    driver = PlanDriver(task_id="t", plan=plan, style=Style.PTC_PLUS_BOTH, log=ExchangeLog(), ids=SessionIds("s"))
    stub = "async def get_order(*, order_id: str) -> Any:"
    messages: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    direct = driver_step(driver, messages, tools=("run_code", "get_order"), system=stub).tool_calls[0]
    assert (direct.tool, direct.arguments) == ("get_order", {"order_id": "o-1"})
    messages += [
        {"role": "assistant", "content": "", "tool_calls": [{"id": direct.call_id, "name": "get_order"}]},
        {
            "role": "tool",
            "tool_call_id": direct.call_id,
            "content": '[preview] {"id": "o-1", "total": 10.5, "lines": [',
        },
    ]
    again = driver_step(driver, messages, tools=("run_code", "get_order"), system=stub).tool_calls[0]
    assert again.tool == "run_code"
    assert str(again.arguments["code"]).endswith("return {'net_total_s': _net_total(v_s)}")


# -- the context limit ------------------------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_style_whose_prompt_exceeds_the_context_is_not_runnable(tmp_path: Path) -> None:
    fits = await run_task(SUITE, INDEPENDENT, Style.PTC, CATALOG, workdir=tmp_path)
    assert_passed(fits)
    metered = Meter().meter(fits.exchanges)
    size = metered.first_request_input
    largest = max(r.input or 0 for r in metered.requests)
    assert size is not None
    beyond = await run_task(SUITE, INDEPENDENT, Style.PTC, CATALOG, workdir=tmp_path, context_tokens=size - 1)
    assert beyond.exchanges == ()
    assert beyond.error == ""
    assert beyond.not_runnable.startswith(ContextExceeded.code)
    assert f"{size} tokens" in beyond.not_runnable
    record = record_of(beyond, Meter().meter(beyond.exchanges))
    assert (record.state, record.passed) == (NOT_RUNNABLE, False)
    assert record_of(fits, Meter().meter(fits.exchanges)).state == RAN
    # Every request must fit, not only the first: the largest one is the bound.
    later = await run_task(SUITE, INDEPENDENT, Style.PTC, CATALOG, workdir=tmp_path, context_tokens=largest - 1)
    assert later.not_runnable and later.exchanges
    exact = await run_task(SUITE, INDEPENDENT, Style.PTC, CATALOG, workdir=tmp_path, context_tokens=largest)
    assert_passed(exact)
    # Sized as metered: the matrix's meter adds the host's system prompt, which counts against the context too.
    hosted = Meter(host_prompt="You are a careful coding agent. " * 40)
    with_host = await run_task(
        SUITE, INDEPENDENT, Style.PTC, CATALOG, workdir=tmp_path, context_tokens=largest, meter=hosted
    )
    assert with_host.not_runnable.startswith(ContextExceeded.code)
