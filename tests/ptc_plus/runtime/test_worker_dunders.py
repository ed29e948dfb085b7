"""Hostile values and exceptions: the worker never lets a program-defined dunder decide the outcome kind.

Each program below attacks one place where the worker looks at what the
program made (its value, its exception, its log text) after the program has
finished. Whatever the attack, the outcome is the kind the program earned —
``invalid-output`` for a value that is not lossless JSON, ``exception`` for a
raised exception — never ``worker-exit`` or ``protocol`` because the worker
itself tripped over the object.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.runtime.outcome import OutcomeKind
from ptc_plus.runtime.run_limits import ResolvedTimeout

from .conftest import RuntimeFactory

# Defines ``Boom``: a class whose every formatting hook raises SystemExit (which ``except Exception`` misses).
BOOM = (
    "class Boom:\n"
    "    def __repr__(self): raise SystemExit('repr')\n"
    "    def __str__(self): raise SystemExit('str')\n"
    "    def __format__(self, spec): raise SystemExit('format')\n"
    "    def __index__(self): raise SystemExit('index')\n"
    "    def __int__(self): raise SystemExit('int')\n"
    "    def __iter__(self): raise SystemExit('iter')\n"
    "    def __len__(self): raise SystemExit('len')\n"
)

INVALID_VALUES = {
    "key-repr-raises": "class K:\n    def __repr__(self): raise RuntimeError('no')\nreturn {K(): 1}",
    "key-repr-exits": BOOM + "return {Boom(): 1}",
    "tuple-key-with-hostile-element": BOOM + "return {(Boom(),): 1}",
    "huge-int-key": "return {10**5000: 1}",
    "str-subclass-key": "class S(str):\n    def __repr__(self): raise SystemExit('r')\nreturn {S('a'): 1}",
    "str-subclass-key-hash": (
        "armed = False\n"
        "class S(str):\n"
        "    def __hash__(self):\n        if armed: raise SystemExit('h')\n        return hash('b')\n"
        "    def __eq__(self, o):\n        if armed: raise SystemExit('e')\n        return str.__eq__(self, o)\n"
        "d = {S('a'): 1, 'b': 2}\narmed = True\nreturn d"
    ),
    "colliding-key-eq": (
        "armed = False\n"
        "class K:\n"
        "    def __hash__(self): return hash('a')\n"
        "    def __eq__(self, other):\n"
        "        if armed: raise SystemExit('eq')\n"
        "        return self is other\n"
        "d = {K(): 1}\nd['a'] = 2\narmed = True\nreturn d"
    ),
    "class-property": "class V:\n    @property\n    def __class__(self): raise SystemExit('class')\nreturn [V()]",
    "getattribute": "class V:\n    def __getattribute__(self, name): raise SystemExit(name)\nreturn {'v': V()}",
    "metaclass-instancecheck": (
        "class M(type):\n"
        "    def __instancecheck__(cls, o): raise SystemExit('instancecheck')\n"
        "    def __subclasscheck__(cls, o): raise SystemExit('subclasscheck')\n"
        "    def __eq__(cls, o): raise SystemExit('eq')\n"
        "    def __hash__(cls): raise SystemExit('hash')\n"
        "    def __getattribute__(cls, name): raise SystemExit(name)\n"
        "class V(metaclass=M): pass\n"
        "return [V()]"
    ),
    "metaclass-eq-on-scalar-check": (
        "class M(type):\n    def __eq__(cls, o): raise SystemExit('eq')\n    __hash__ = type.__hash__\n"
        "class V(metaclass=M): pass\nreturn V()"
    ),
    "hostile-module-name": BOOM + "class V: pass\nV.__module__ = Boom()\nreturn V()",
    "bytes-subclass": "class B(bytes):\n    def __len__(self): raise SystemExit('len')\nreturn [B(b'x')]",
    "exception-as-value": BOOM + "return ValueError(Boom())",
    "dict-subclass": "class D(dict):\n    def __iter__(self): raise SystemExit('iter')\nreturn D(a=1)",
}

EXCEPTIONS = {
    "str-raises": "class E(Exception):\n    def __str__(self): raise RuntimeError('no')\nraise E()",
    "str-exits": "class E(Exception):\n    def __str__(self): raise SystemExit('str')\nraise E()",
    "str-returns-non-str": "class E(Exception):\n    def __str__(self): return 42\nraise E()",
    "str-returns-hostile-str": (
        "class S(str):\n"
        "    def __format__(self, spec): raise SystemExit('format')\n"
        "    def __add__(self, other): raise SystemExit('add')\n"
        "    def __radd__(self, other): raise SystemExit('radd')\n"
        "    def __len__(self): raise SystemExit('len')\n"
        "class E(Exception):\n    def __str__(self): return S('boom')\nraise E()"
    ),
    "hostile-args": BOOM + "raise ValueError(Boom(), Boom())",
    "getattribute": "class E(Exception):\n    def __getattribute__(self, name): raise SystemExit(name)\nraise E('x')",
    "getattr": "class E(Exception):\n    def __getattr__(self, name): raise SystemExit(name)\nraise E('x')",
    "class-property": (
        "class E(Exception):\n    @property\n    def __class__(self): raise SystemExit('class')\nraise E('x')"
    ),
    "metaclass-getattribute": (
        "class M(type):\n    def __getattribute__(cls, name): raise SystemExit(name)\n"
        "class E(Exception, metaclass=M): pass\nraise E('x')"
    ),
    "metaclass-subclasscheck": (
        "class M(type):\n"
        "    def __instancecheck__(cls, o): raise SystemExit('instancecheck')\n"
        "    def __subclasscheck__(cls, o): raise SystemExit('subclasscheck')\n"
        "class E(Exception, metaclass=M): pass\nraise E('x')"
    ),
    "hostile-qualname": "class S(str):\n    def __format__(self, s): raise SystemExit('f')\n"
    "class E(Exception): pass\nE.__qualname__ = S('Q')\nraise E('x')",
    "tool-call-error-with-hostile-tool-name": BOOM + "e = ToolCallError('t', 'c', 'm')\ne.tool_name = Boom()\nraise e",
    "tool-call-error-subclass": (
        "class T(ToolCallError):\n    @property\n    def tool_name(self): raise SystemExit('t')\n"
        "    @tool_name.setter\n    def tool_name(self, value): pass\nraise T('a', 'b', 'c')"
    ),
    "syntax-error-subclass": (
        "class S(SyntaxError):\n    @property\n    def lineno(self): raise SystemExit('l')\nraise S('x')"
    ),
    "syntax-error-hostile-fields": BOOM
    + "e = SyntaxError('x')\ne.lineno = Boom(); e.text = Boom(); e.offset = Boom(); e.filename = Boom()\nraise e",
    "hostile-notes": BOOM + "e = ValueError('x')\ne.__notes__ = Boom()\nraise e",
    "hostile-note-items": BOOM + "e = ValueError('x')\ne.__notes__ = [Boom(), 'kept note']\nraise e",
    "hostile-instance-dict": (
        "class D(dict):\n"
        "    def __getitem__(self, k): raise SystemExit('k')\n"
        "    def get(self, *a): raise SystemExit('g')\n"
        "e = ValueError('x')\ne.__dict__ = D()\nraise e"
    ),
    "cause-cycle": "a = ValueError('a')\nb = ValueError('b')\na.__cause__ = b\nb.__cause__ = a\nraise a",
    "context-cycle": "a = ValueError('a')\nb = ValueError('b')\na.__context__ = b\nb.__context__ = a\nraise a",
    "hostile-cause": (
        "class E(Exception):\n    def __str__(self): raise SystemExit('s')\nraise ValueError('v') from E()"
    ),
    "traceback-replaced": (
        "import sys\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    raise e.with_traceback(None)"
    ),
    "hostile-group-member": BOOM
    + "class E(Exception):\n    def __str__(self): raise SystemExit('s')\n"
    + "raise ExceptionGroup('g', [E(), ValueError(Boom())])",
    "linecache-poisoned": (
        "import linecache\nlinecache.cache['<program>'] = (1, None, None, '<program>')\nraise ValueError('x')"
    ),
    "code-named-dev-zero": "exec(compile('raise ValueError(1)', '/dev/zero', 'exec'))",
}

SYSTEM_EXITS = {
    "system-exit": ("raise SystemExit(3)", "SystemExit"),
    "keyboard-interrupt": ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    "generator-exit": ("raise GeneratorExit", "GeneratorExit"),
    "system-exit-in-a-task": (
        "import asyncio\nasync def f():\n    raise SystemExit(4)\nt = asyncio.get_running_loop().create_task(f())\n"
        "await asyncio.sleep(5)\nreturn 1",
        "SystemExit",
    ),
    "keyboard-interrupt-in-a-callback": (
        "import asyncio\ndef f():\n    raise KeyboardInterrupt\nasyncio.get_running_loop().call_soon(f)\n"
        "await asyncio.sleep(5)\nreturn 1",
        "KeyboardInterrupt",
    ),
}


@pytest.mark.asyncio
@pytest.mark.parametrize("code", INVALID_VALUES.values(), ids=INVALID_VALUES.keys())
async def test_hostile_values_are_invalid_output(make_runtime: RuntimeFactory, workspace: Path, code: str) -> None:
    outcome = await make_runtime().run(code, workspace=workspace, timeout=ResolvedTimeout(seconds=20))
    assert outcome.failure is not None, outcome
    assert outcome.failure.kind is OutcomeKind.INVALID_OUTPUT, outcome.failure.message()


@pytest.mark.asyncio
@pytest.mark.parametrize("code", EXCEPTIONS.values(), ids=EXCEPTIONS.keys())
async def test_hostile_exceptions_are_exceptions(make_runtime: RuntimeFactory, workspace: Path, code: str) -> None:
    outcome = await make_runtime().run(code, workspace=workspace, timeout=ResolvedTimeout(seconds=20))
    assert outcome.failure is not None, outcome
    assert outcome.failure.kind is OutcomeKind.EXCEPTION, outcome.failure.message()
    assert outcome.failure.traceback is not None
    assert "worker" not in outcome.failure.traceback


@pytest.mark.asyncio
@pytest.mark.parametrize(("code", "kind"), SYSTEM_EXITS.values(), ids=SYSTEM_EXITS.keys())
async def test_base_exceptions_of_the_program_are_exceptions(
    make_runtime: RuntimeFactory, workspace: Path, code: str, kind: str
) -> None:
    outcome = await make_runtime().run(code, workspace=workspace, timeout=ResolvedTimeout(seconds=20))
    assert outcome.failure is not None, outcome
    assert outcome.failure.kind is OutcomeKind.EXCEPTION, outcome.failure.message()
    assert outcome.failure.params["type"] == kind


@pytest.mark.asyncio
async def test_a_failing_str_is_reported_like_python_does(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run(EXCEPTIONS["str-raises"], workspace=workspace)
    assert outcome.failure is not None
    assert outcome.failure.params == {"type": "E", "message": "<exception str() failed>"}
    assert (outcome.failure.traceback or "").endswith("E: <exception str() failed>\n")


@pytest.mark.asyncio
async def test_a_hostile_metaclass_does_not_hide_the_type_name(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run(EXCEPTIONS["metaclass-getattribute"], workspace=workspace)
    assert outcome.failure is not None
    assert outcome.failure.params == {"type": "E", "message": "x"}


@pytest.mark.asyncio
async def test_a_non_string_key_is_named_without_its_repr(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run(INVALID_VALUES["key-repr-raises"], workspace=workspace)
    assert outcome.failure is not None
    assert "K" in outcome.failure.message() and "not a string" in outcome.failure.message()
    outcome = await make_runtime().run("return {'a': {3: 1}}", workspace=workspace)
    assert outcome.failure is not None
    assert "value['a']: key 3 is not a string" in outcome.failure.message()


@pytest.mark.asyncio
async def test_tool_name_of_a_tampered_tool_call_error_is_dropped(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    outcome = await make_runtime().run(EXCEPTIONS["tool-call-error-with-hostile-tool-name"], workspace=workspace)
    assert outcome.failure is not None and outcome.failure.tool_name is None
    outcome = await make_runtime().run("raise ToolCallError('files_read', 'c', 'm')", workspace=workspace)
    assert outcome.failure is not None and outcome.failure.tool_name == "files_read"


@pytest.mark.asyncio
async def test_exception_groups_show_their_members(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = (
        "import asyncio\n"
        "async def fails():\n"
        "    raise ValueError('inner detail')\n"
        "async with asyncio.TaskGroup() as group:\n"
        "    group.create_task(fails())\n"
    )
    outcome = await make_runtime().run(code, workspace=workspace)
    assert outcome.failure is not None and outcome.failure.params["type"] == "ExceptionGroup"
    trace = outcome.failure.traceback or ""
    assert "ValueError: inner detail" in trace and "line 3, in fails" in trace


@pytest.mark.asyncio
async def test_chained_exceptions_show_the_cause(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = "try:\n    {}['missing']\nexcept KeyError as error:\n    raise RuntimeError('lookup failed') from error\n"
    outcome = await make_runtime().run(code, workspace=workspace)
    assert outcome.failure is not None
    trace = outcome.failure.traceback or ""
    assert trace.index("KeyError: 'missing'") < trace.index("direct cause") < trace.index("RuntimeError: lookup")
    assert "line 2, in <module>" in trace and "line 4, in <module>" in trace


@pytest.mark.asyncio
async def test_program_class_names_drop_the_wrapper_function(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run("class Oops(Exception): pass\nraise Oops('x')", workspace=workspace)
    assert outcome.failure is not None and outcome.failure.params["type"] == "Oops"


@pytest.mark.asyncio
async def test_a_fifo_named_as_source_file_cannot_stall_the_report(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    code = "import os\nos.mkfifo('pipe')\nexec(compile('raise ValueError(1)', os.path.abspath('pipe'), 'exec'))\n"
    outcome = await make_runtime().run(code, workspace=workspace, timeout=ResolvedTimeout(seconds=10))
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.EXCEPTION


@pytest.mark.asyncio
async def test_log_text_of_a_hostile_str_subclass_is_captured(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = (
        "import sys\n"
        "class S(str):\n"
        "    def __radd__(self, other): return 5\n"
        "    def __add__(self, other): return 5\n"
        "    def isascii(self): raise SystemExit('isascii')\n"
        "sys.stdout.write('a')\nsys.stdout.write(S('b'))\nsys.stdout.buffer.write(b'c')\nreturn 1"
    )
    outcome = await make_runtime().run(code, workspace=workspace)
    assert outcome.ok, outcome.failure and outcome.failure.message()
    assert [(entry.stream, entry.text) for entry in outcome.logs] == [("stdout", "abc")]


@pytest.mark.asyncio
async def test_hostile_subscripts_of_tools_raise_key_error_in_the_program(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    code = (
        BOOM + "class S(str):\n"
        "    def __hash__(self): raise SystemExit('h')\n"
        "    def __eq__(self, o): raise SystemExit('e')\n"
        "caught = []\n"
        "for key in (Boom(), S('x')):\n"
        "    try:\n        tools[key]\n    except KeyError:\n        caught.append('key')\n"
        "    caught.append(key in tools)\n"
        "return caught"
    )
    outcome = await make_runtime().run(code, workspace=workspace)
    assert outcome.ok, outcome.failure and outcome.failure.message()
    assert outcome.value == ["key", False, "key", False]


@pytest.mark.asyncio
async def test_a_str_subclass_still_names_a_tool(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = (
        "import enum\n"
        "class Tool(enum.StrEnum):\n    ECHO = 'echo'\n"
        "return [Tool.ECHO in tools, tools[Tool.ECHO].__qualname__, getattr(tools, Tool.ECHO).__qualname__]"
    )
    outcome = await make_runtime().run(code, workspace=workspace, tool_names=("echo",))
    assert outcome.ok, outcome.failure and outcome.failure.message()
    assert outcome.value == [True, "tools.echo", "tools.echo"]
