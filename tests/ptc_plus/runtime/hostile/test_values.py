"""Hostile values: what the program returns or raises must never crash the worker or the host.

Non-JSON values are ``invalid-output``; exceptions, however hostile their
dunder methods, are ``exception`` (issue 8 item 10); the worker never calls
program-defined methods unguarded.
"""

from __future__ import annotations

import re

import pytest

from .conftest import Hostile
from .guard import MIB

pytestmark = [pytest.mark.needs_bwrap]

RAISING = """
class Boom(Exception):
    pass
def boom(*args, **kwargs):
    raise Boom('hostile dunder')
"""
"""Program text: ``boom`` raises from whatever dunder it is installed as."""


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "code",
    [
        pytest.param("return float('nan')", id="nan"),
        pytest.param("return {'a': [1, {'b': float('-inf')}]}", id="infinity_nested"),
        pytest.param("value = []\nvalue.append(value)\nreturn value", id="cycle"),
        pytest.param("value = {}\nvalue['self'] = value\nreturn {'outer': value}", id="dict_cycle"),
        pytest.param("value = []\nfor _ in range(100_000):\n    value = [value]\nreturn value", id="deep_nesting"),
        pytest.param("return {1: 'one'}", id="non_string_key"),
        pytest.param("return (1, 2)", id="tuple"),
        pytest.param("return b'bytes'", id="bytes"),
        pytest.param("return {1, 2}", id="set"),
        pytest.param("return 10 ** 5000", id="huge_int"),
        pytest.param("return '\\ud800'", id="lone_surrogate"),
        pytest.param("return object()", id="object"),
        pytest.param("async def later():\n    return 1\nreturn later()", id="coroutine"),
        pytest.param("return (i for i in range(3))", id="generator"),
    ],
)
async def test_values_that_are_not_lossless_json_are_invalid_output(hostile: Hostile, code: str) -> None:
    (await hostile.run(code)).failed("invalid-output")


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "code",
    [
        pytest.param(
            "class Key:\n    __repr__ = __str__ = __hash__ = __eq__ = boom\n    def __hash__(self):\n"
            "        return 1\nreturn {Key(): 1}",
            id="key_repr_raises",
        ),
        pytest.param(
            "class S(str):\n    __repr__ = __str__ = __hash__ = __eq__ = __len__ = __iter__ = boom\nreturn [S('a')]",
            id="str_subclass",
        ),
        pytest.param(
            "class F(float):\n    __repr__ = __str__ = __float__ = boom\nreturn {'x': F(1.5)}", id="float_subclass"
        ),
        pytest.param(
            "class D(dict):\n    __iter__ = items = keys = values = __len__ = __repr__ = boom\nreturn D(a=1)",
            id="dict_subclass",
        ),
        pytest.param(
            "class L(list):\n    __iter__ = __len__ = __getitem__ = __repr__ = boom\nreturn L([1, 2])",
            id="list_subclass",
        ),
        pytest.param(
            "class Meta(type):\n    __repr__ = __str__ = __eq__ = __hash__ = boom\n"
            "    def __getattribute__(cls, name):\n        raise Boom(name)\n"
            "class Thing(metaclass=Meta):\n    pass\nreturn [Thing()]",
            id="hostile_metaclass",
        ),
    ],
)
async def test_values_with_hostile_dunders_are_invalid_output(hostile: Hostile, code: str) -> None:
    (await hostile.run(RAISING + code)).failed("invalid-output")


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "code",
    [
        pytest.param("class E(Exception):\n    __str__ = __repr__ = boom\nraise E('x')", id="str_raises"),
        pytest.param(
            "class E(Exception):\n    @property\n    def args(self):\n        raise Boom('args')\nraise E()",
            id="args_raise",
        ),
        pytest.param(
            "class E(Exception):\n    def __str__(self):\n        return str(self)\nraise E()", id="str_recurses"
        ),
        pytest.param(
            "class E(Exception):\n    def __str__(self):\n        return 42\nraise E()", id="str_not_a_string"
        ),
        pytest.param("class E(BaseException):\n    __str__ = boom\nraise E()", id="base_exception"),
        pytest.param("raise SystemExit(0)", id="system_exit"),
        pytest.param("raise KeyboardInterrupt", id="keyboard_interrupt"),
        pytest.param(
            "class M(type):\n    __repr__ = __str__ = __eq__ = __hash__ = boom\n"
            "    def __getattribute__(cls, name):\n        raise Boom(name)\n"
            "class E(Exception, metaclass=M):\n    __str__ = __repr__ = boom\nraise E()",
            id="hostile_class_name",
        ),
        pytest.param(
            "a = ValueError('a')\nb = ValueError('b')\na.__cause__ = b\nb.__cause__ = a\nraise a", id="cause_cycle"
        ),
        pytest.param("def down(n):\n    return down(n + 1)\ndown(0)", id="recursion"),
    ],
)
async def test_hostile_exceptions_are_exceptions(hostile: Hostile, code: str) -> None:
    (await hostile.run(RAISING + code)).failed("exception")


@pytest.mark.asyncio
async def test_an_exception_whose_str_never_returns_is_stopped_by_the_timeout(hostile: Hostile) -> None:
    code = "class E(Exception):\n    def __str__(self):\n        while True:\n            pass\nraise E()"
    (await hostile.run(code, timeout=1)).failed("timeout")


@pytest.mark.asyncio
async def test_a_c_stack_overflow_is_a_worker_exit(hostile: Hostile) -> None:
    # C-level recursion (repr of a deep list) on a small thread stack, past a raised recursion limit: SIGSEGV.
    code = """
import threading
sys.setrecursionlimit(10 ** 7)
value = []
for _ in range(1_000_000):
    value = [value]
threading.stack_size(256 * 1024)
thread = threading.Thread(target=lambda: repr(value))
thread.start()
thread.join()
return 'survived'
"""
    (await hostile.run(code)).failed("worker-exit")


@pytest.mark.asyncio
async def test_non_json_tool_arguments_are_a_clear_argument_error(hostile: Hostile) -> None:
    code = """
results = {}
for name, value in (('nan', float('nan')), ('bytes', b'x'), ('cycle', None)):
    if name == 'cycle':
        value = []
        value.append(value)
    try:
        await tools.write_file(path='x.txt', content=value)
        results[name] = 'sent'
    except ToolArgumentError:
        results[name] = 'ToolArgumentError'
return results
"""
    outcome = await hostile.run(code)
    assert outcome.ok() == {"nan": "ToolArgumentError", "bytes": "ToolArgumentError", "cycle": "ToolArgumentError"}
    assert outcome.calls == 0


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("code", "size"),
    [
        pytest.param("return 'y' * 100_000_000", 100_000_002, id="one_long_string"),
        pytest.param("return ['x' * 1000 for _ in range(200_000)]", 16 * 1024 * 1024, id="many_strings"),
    ],
)
async def test_a_value_over_the_message_limit_says_so(hostile: Hostile, code: str, size: int) -> None:
    # Its encoding would not fit the run's memory either: the diagnosis is the limit, not a thread's change.
    limits = {"memory_bytes": 256 * MIB, "max_message_bytes": 16 * MIB}
    outcome = (await hostile.run(code, **limits)).failed("output-limit")
    said = re.fullmatch(
        r"The program's value is at least (\d+) bytes as JSON, over the limit of (\d+) bytes "
        r"\(\[runtime\] max_message_bytes\): return less, or raise that limit",
        outcome.message,
    )
    assert said is not None, outcome.describe()
    assert int(said.group(1)) >= size and int(said.group(2)) == 16 * MIB, outcome.describe()
