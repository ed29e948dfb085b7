"""BFCL ground-truth call strings (``mv(source='a.txt', destination='temp')``) read with ``ast``, never evaluated.

BFCL itself ``eval``s these strings against its backends; here a call is
accepted only when it is one plain function name applied to literal
arguments: strings, numbers (a leading minus included), booleans, ``None``,
and lists, tuples or dicts of those. Anything else (an attribute, a nested
call, a name, an operator, ``*args``) is refused with
:class:`~.errors.BfclGroundTruthRejected` before anything runs.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from hookspecs.types import JSONObject, JSONValue

from .errors import BfclGroundTruthRejected


@attrs.frozen
class ParsedCall:
    """One ground-truth call: the function's name, its positional and keyword arguments (JSON literals)."""

    name: str
    args: tuple[JSONValue, ...]
    kwargs: Mapping[str, JSONValue]

    def bind(self, function: Callable[..., Any]) -> JSONObject:
        """The arguments by parameter name, as the tool receives them (positional ones bound by ``function``)."""
        try:
            bound = inspect.signature(function).bind(*self.args, **self.kwargs)
        except TypeError as error:
            raise BfclGroundTruthRejected(call=self.name, reason=str(error)) from None
        return dict(bound.arguments)


def _literal(node: ast.expr, text: str) -> JSONValue:
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, int, float, bool))):
        value: JSONValue = node.value
        return value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        number = node.operand.value
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(item, text) for item in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[str, JSONValue] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise BfclGroundTruthRejected(call=text, reason="a dict key that is not a string literal")
            result[key.value] = _literal(value, text)
        return result
    raise BfclGroundTruthRejected(call=text, reason=f"{type(node).__name__} is not a literal")


def parse_call(text: str) -> ParsedCall:
    """``text`` as a :class:`ParsedCall`.

    :raises BfclGroundTruthRejected: not Python, not one call of a plain name, or an argument that is not a literal.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise BfclGroundTruthRejected(call=text, reason=f"not a Python expression: {error.msg}") from None
    call = tree.body
    if not isinstance(call, ast.Call):
        raise BfclGroundTruthRejected(call=text, reason="not a call")
    if not isinstance(call.func, ast.Name):
        raise BfclGroundTruthRejected(call=text, reason="the called thing is not a plain function name")
    kwargs: dict[str, JSONValue] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise BfclGroundTruthRejected(call=text, reason="** arguments")
        if keyword.arg in kwargs:
            raise BfclGroundTruthRejected(call=text, reason=f"argument {keyword.arg} given twice")
        kwargs[keyword.arg] = _literal(keyword.value, text)
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        raise BfclGroundTruthRejected(call=text, reason="* arguments")
    return ParsedCall(name=call.func.id, args=tuple(_literal(a, text) for a in call.args), kwargs=kwargs)
