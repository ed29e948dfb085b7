"""The demo's closing line: what its code-mode session and its native twin cost, by the evaluation's own meter.

``ptc-plus demo`` hands a :class:`DemoBill` to the demo, which records every
request of both sessions through it; the line it returns is counted from
those requests with :class:`~ptc_plus.evaluation.metering.Meter` (the same
parts, prefix-cache rule and unit as the evaluation), never a constant.
"""

from __future__ import annotations

from hookspecs.reference import AssistantTurn, Model, ModelRequest
from ptc_plus.demo import CODE, NATIVE
from ptc_plus.errors import PtcError
from ptc_plus.evaluation.exchange import Exchange
from ptc_plus.evaluation.metering import Meter, Totals
from ptc_plus.i18n import message


class _Recorded:
    """A model route whose exchanges enter the bill under one style (the style names the session)."""

    def __init__(self, model: Model, style: str, into: list[Exchange]) -> None:
        self._model = model
        self._style = style
        self._into = into

    @property
    def route(self) -> str:
        return self._model.route

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        answer = await self._model.complete(request)
        self._into.append(Exchange(session_id=self._style, parent_session_id=None, request=request, answer=answer))
        return answer


class DemoBill:
    """Records the demo's sessions by style and says what each cost (the demo's :class:`Bill`)."""

    def __init__(self, meter: Meter | None = None) -> None:
        self._meter = meter
        self._exchanges: dict[str, list[Exchange]] = {CODE: [], NATIVE: []}

    def record(self, model: Model, style: str) -> Model:
        return _Recorded(model, style, self._exchanges.setdefault(style, []))

    def exchanges(self, style: str) -> tuple[Exchange, ...]:
        """What was recorded under ``style``, in order."""
        return tuple(self._exchanges.get(style, ()))

    def totals(self) -> dict[str, Totals]:
        """Per style, every recorded request metered (tokenizer loaded on first use)."""
        meter = self._meter or Meter()
        return {style: meter.meter(exchanges).total for style, exchanges in self._exchanges.items()}

    def closing_line(self) -> str | None:
        if not self._exchanges[CODE] or not self._exchanges[NATIVE]:
            return None
        try:
            found = self.totals()
        except PtcError as error:  # no tokenizer: say so rather than print a number nobody counted
            return message("demo.bill.unknown", problem=str(error))
        code, native = found[CODE], found[NATIVE]
        return message(
            "demo.bill",
            code_requests=code.requests,
            code_input=_n(code.input),
            code_cached=_n(code.input_cached),
            code_output=_n(code.output),
            native_requests=native.requests,
            native_input=_n(native.input),
            native_cached=_n(native.input_cached),
            native_output=_n(native.output),
            ratio=_ratio(code.total, native.total),
        )


def _ratio(code: int | None, native: int | None) -> str:
    return f"{code / native:.2f}" if code is not None and native else "?"


def _n(value: int | None) -> str:
    return f"{value:,}" if value is not None else "?"
