"""``ptc-plus chat`` and ``ptc-plus sessions`` against a fake OpenAI-compatible server on 127.0.0.1.

``ptc-plus`` runs through ``main`` in this process, the function the console script calls (ADR 0113),
with the environment and standard input each invocation names; the installed command runs as a
subprocess where the process is the point: lines from a real pipe, no terminal to ask on. The server is
scripted per request: whole or streamed answers, a 429 before the answer, a 500 with an error body, tool
calls that run ``run_code``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import orjson
import pytest

from tests.cli_runner import CliRunner

CLI = str(Path(sys.executable).with_name("ptc-plus"))
PLANTED_KEY = "sk-planted-3f9c2a7e1d5b4c8a"


class FakeOpenAI:
    """A loopback chat-completions server answering each request with the next scripted reply.

    A reply is ``("json", status, body)``, ``("stream", [text pieces], tool_calls or None)``,
    ``("hang", [text pieces])`` (sends the pieces, then keeps the stream open until :meth:`close`) or
    ``("echo", status)`` (an error whose text repeats the ``Authorization`` header it got, as some
    providers' "invalid key" answers do).
    """

    def __init__(self) -> None:
        self.replies: list[tuple[Any, ...]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.released = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                fake.requests.append(orjson.loads(body))
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = fake.replies.pop(0) if fake.replies else ("json", 500, {"error": {"message": "no reply"}})
                if reply[0] == "json":
                    self._json(reply[1], reply[2])
                elif reply[0] == "echo":
                    said = f"invalid credentials in header Authorization: {self.headers.get('Authorization')}"
                    self._json(reply[1], {"error": {"message": said}})
                else:
                    self._stream(reply)

            def _json(self, status: int, body: Any) -> None:
                payload = orjson.dumps(body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                if status == 429:
                    self.send_header("Retry-After-Ms", "10")
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, reply: tuple[Any, ...]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for piece in reply[1]:
                    self._event(chunk({"content": piece}))
                    time.sleep(0.02)
                if reply[0] == "hang":
                    fake.released.wait(30)
                    return
                if reply[2]:
                    self._event(chunk({"tool_calls": reply[2]}))
                self._event(
                    {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": []}
                    | {
                        "usage": {
                            "prompt_tokens": 50,
                            "completion_tokens": 7,
                            "prompt_tokens_details": {"cached_tokens": 20},
                        }
                    }
                )
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _event(self, data: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + orjson.dumps(data) + b"\n\n")
                self.wfile.flush()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def chunk(delta: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }


def completion(content: str | None, tool_calls: list[dict[str, Any]] | None = None, usage: Any = None) -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {"id": "c", "object": "chat.completion", "created": 0, "model": "m"}
    body["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
    if usage is not None:
        body["usage"] = usage
    return body


def run_code_call(code: str, call_id: str = "call_1", *, streamed: bool = False) -> dict[str, Any]:
    arguments = orjson.dumps({"description": "test program", "code": code}).decode()
    call: dict[str, Any] = {"id": call_id, "type": "function", "function": {"name": "run_code", "arguments": arguments}}
    return call | {"index": 0} if streamed else call


def chat_env(**extra: str) -> dict[str, str]:
    # COLUMNS and LINES out too: pytest-xdist's workers export COLUMNS=80, and chat wraps to it (a test that
    # wants a width sets it, as test_chat_wrap does)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_") and k not in ("COLUMNS", "LINES")}
    return env | {"PTC_LOCALE": "en", "NO_COLOR": "1"} | extra


def chat_process(
    workspace: Path, server: FakeOpenAI, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The installed command in a subprocess: for what needs the process (its own standard input)."""
    command = [CLI, "chat", "--workspace", str(workspace), "--base-url", server.url, "--model", "m", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env or chat_env(), timeout=300)


class Done(NamedTuple):
    """What one in-process invocation returned and printed, named as ``subprocess`` names them."""

    returncode: int
    stdout: str
    stderr: str


class Ptc(Protocol):
    def __call__(self, *argv: str, env: dict[str, str] | None = None, input: str = "") -> Done: ...


class Chat(Protocol):
    def __call__(self, workspace: Path, server: FakeOpenAI, *args: str, env: dict[str, str] | None = None) -> Done: ...


@pytest.fixture
def ptc(run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> Ptc:
    """``ptc-plus *argv`` in this process with exactly ``env`` (``chat_env()`` unless given) and ``input``."""

    def run(*argv: str, env: dict[str, str] | None = None, input: str = "") -> Done:
        wanted = chat_env() if env is None else env
        with monkeypatch.context() as scoped:
            for key in [k for k in os.environ if k not in wanted]:
                scoped.delenv(key)
            for key, value in wanted.items():
                scoped.setenv(key, value)
            done = run_cli(*argv, stdin=input)
        return Done(done.code, done.out, done.err)

    return run


@pytest.fixture
def chat(ptc: Ptc) -> Chat:
    def run(workspace: Path, server: FakeOpenAI, *args: str, env: dict[str, str] | None = None) -> Done:
        return ptc("chat", "--workspace", str(workspace), "--base-url", server.url, "--model", "m", *args, env=env)

    return run


def log_text(workspace: Path) -> str:
    return "".join(p.read_text() for p in (workspace / ".agent-host" / "sessions").glob("*.jsonl"))


def usage_events(workspace: Path) -> list[dict[str, Any]]:
    events = [orjson.loads(line) for line in log_text(workspace).splitlines() if line.strip()]
    return [e["data"] for e in events if e["type"] == "chat-model-usage"]


def test_one_shot_streams_the_answer_and_records_usage(chat: Chat, tmp_path: Path, server: FakeOpenAI) -> None:
    server.replies.append(("stream", ["Hello", ", ", "world."], None))
    done = chat(tmp_path, server, "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, world.\n"
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["messages"][-1] == {"role": "user", "content": "hi"}
    assert "run_code" in {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert usage_events(tmp_path) == [{"input": 50, "cached_input": 20, "uncached_input": 30, "output": 7}]
    assert "ptc-plus chat --resume s-" in done.stderr


def test_whole_answers_and_unknown_usage_stays_unknown(chat: Chat, tmp_path: Path, server: FakeOpenAI) -> None:
    server.replies.append(("json", 200, completion("Whole answer.", usage={"prompt_tokens": 12})))
    done = chat(tmp_path, server, "-p", "hi", "--no-stream")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Whole answer.\n"
    assert "stream" not in server.requests[0]
    # The server gave prompt tokens but no cache detail: the total is kept, the parts are not made up.
    assert usage_events(tmp_path) == [{"input": 12, "cached_input": None, "uncached_input": None, "output": None}]


def test_a_429_is_retried_then_answered(chat: Chat, tmp_path: Path, server: FakeOpenAI) -> None:
    server.replies.append(("json", 429, {"error": {"message": "slow down"}}))
    server.replies.append(("stream", ["After the wait."], None))
    done = chat(tmp_path, server, "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "After the wait.\n"
    assert len(server.requests) == 2
    assert server.headers[1].get("x-stainless-retry-count") == "1"


def test_a_500_shows_the_servers_error_text(chat: Chat, tmp_path: Path, server: FakeOpenAI) -> None:
    for _ in range(4):  # the first try and three retries
        server.replies.append(("json", 500, {"error": {"message": "the backend is on fire"}}))
    done = chat(tmp_path, server, "-p", "hi")
    assert done.returncode == 1
    assert "HTTP 500: the backend is on fire" in done.stderr
    assert "PTC-7304" in done.stderr and "Traceback" not in done.stderr
    assert len(server.requests) == 4


def test_tool_calls_run_code_and_the_nested_calls_are_shown(chat: Chat, tmp_path: Path, server: FakeOpenAI) -> None:
    code = 'r = await tools.convert_units(value=2, from_unit="km", to_unit="m")\nreturn r["value"]'
    server.replies.append(("stream", [], [run_code_call(code, streamed=True)]))
    server.replies.append(("stream", ["2 km is 2000 m."], None))
    done = chat(tmp_path, server, "-p", "How many metres in 2 km?", "--tools", "demo", "--verbose")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "2 km is 2000 m.\n"
    assert "  → run_code(" in done.stderr
    assert "    → convert_units(" in done.stderr and "    ← convert_units ok" in done.stderr
    settled = [line for line in done.stderr.splitlines() if line.startswith("  ← run_code ok ")]
    assert len(settled) == 1 and '"value":2000.0' in settled[0]
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_1"
    assert "2000" in tool_message["content"]


def test_the_key_reaches_the_server_and_nothing_else(chat: Chat, tmp_path: Path, server: FakeOpenAI) -> None:
    server.replies.append(("stream", ["ok"], None))
    for _ in range(4):
        server.replies.append(("json", 500, {"error": {"message": "failing"}}))
    env = chat_env(MY_KEY=PLANTED_KEY)
    first = chat(tmp_path, server, "-p", "hi", "--api-key-env", "MY_KEY", "--verbose", env=env)
    second = chat(tmp_path, server, "-p", "again", "--api-key-env", "MY_KEY", "--verbose", env=env)
    assert first.returncode == 0 and second.returncode == 1
    assert server.headers[0]["authorization"] == f"Bearer {PLANTED_KEY}"
    for output in (first.stdout, first.stderr, second.stdout, second.stderr):
        assert PLANTED_KEY not in output
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written, "the session left no record"
    for path in written:
        assert PLANTED_KEY.encode() not in path.read_bytes(), path
    for request in server.requests:
        assert PLANTED_KEY not in orjson.dumps(request).decode()


def test_a_provider_error_echoing_the_key_is_shown_redacted(
    chat: Chat, ptc: Ptc, tmp_path: Path, server: FakeOpenAI
) -> None:
    server.replies.append(("echo", 401))
    server.replies.append(("echo", 401))
    env = chat_env(MY_KEY=PLANTED_KEY, HOME=str(tmp_path / "home"))
    one_shot = chat(tmp_path, server, "-p", "hi", "--api-key-env", "MY_KEY", env=env)
    command = ["chat", "--workspace", str(tmp_path), "--base-url", server.url, "--model", "m"]
    piped = ptc(*command, "--api-key-env", "MY_KEY", "--no-stream", input="hi again\n/exit\n", env=env)
    assert len(server.requests) == 2  # a 401 is not retried; the server did echo the key it got
    assert one_shot.returncode == 1 and piped.returncode == 0, piped.stderr
    assert "invalid credentials in header Authorization: Bearer [redacted]" in one_shot.stderr
    assert "invalid credentials in header Authorization: Bearer [redacted]" in piped.stdout
    for output in (one_shot.stdout, one_shot.stderr, piped.stdout, piped.stderr):
        assert PLANTED_KEY not in output
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written, "the sessions left no record"
    for path in written:  # the session logs, the history, any record
        assert PLANTED_KEY.encode() not in path.read_bytes(), path


def test_no_key_sends_no_authorization(chat: Chat, tmp_path: Path, server: FakeOpenAI) -> None:
    server.replies.append(("stream", ["ok"], None))
    done = chat(tmp_path, server, "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert "authorization" not in server.headers[0]
    assert "$OPENAI_API_KEY is not set" in done.stderr


def session_of(stderr: str) -> str:
    return stderr.split("--resume ")[1].split(")")[0]


def test_usage_errors(chat: Chat, ptc: Ptc, tmp_path: Path, server: FakeOpenAI) -> None:
    missing = ptc("chat", "--workspace", str(tmp_path), "-p", "x")
    assert missing.returncode == 2 and "PTC-7301" in missing.stderr
    unset = chat(tmp_path, server, "-p", "x", "--api-key-env", "NOT_SET_ANYWHERE")
    assert unset.returncode == 2 and "PTC-7302" in unset.stderr and "NOT_SET_ANYWHERE" in unset.stderr
    unknown = chat(tmp_path, server, "-p", "x", "--resume", "s-nope")
    assert unknown.returncode == 2 and "PTC-7303" in unknown.stderr
    bare = chat(tmp_path, server, "-p", "x", "--base-url", "localhost:11434/v1")
    assert bare.returncode == 2 and "PTC-7305" in bare.stderr, bare.stderr
    assert "did you mean http://localhost:11434/v1?" in bare.stderr
    assert server.requests == []
    assert not (tmp_path / ".agent-host" / "sessions").exists() or log_text(tmp_path) == ""


def test_a_turn_that_never_reached_the_model_leaves_no_session(ptc: Ptc, tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nothing listens on: every request is refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    command = ["chat", "--workspace", str(tmp_path), "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m"]
    done = ptc(*command, "-p", "hi", "--retries", "0")
    assert done.returncode == 1 and "PTC-7306" in done.stderr, done.stderr
    assert "--resume" not in done.stderr
    listed = ptc("sessions", "--workspace", str(tmp_path), "--json")
    assert orjson.loads(listed.stdout)["sessions"] == []


def test_a_failed_program_names_its_code_once(chat: Chat, tmp_path: Path, server: FakeOpenAI) -> None:
    server.replies.append(("stream", [], [run_code_call("raise ValueError('bad input')", streamed=True)]))
    server.replies.append(("stream", ["It failed."], None))
    done = chat(tmp_path, server, "-p", "go")
    assert done.returncode == 0, done.stderr
    failed = [line for line in done.stderr.splitlines() if line.startswith("  ← run_code ")]
    assert failed == ["  ← run_code error exception (PTC-2101): The program raised ValueError: bad input"], failed


def test_resume_and_sessions(chat: Chat, ptc: Ptc, tmp_path: Path, server: FakeOpenAI) -> None:
    server.replies.append(("stream", ["first answer"], None))
    first = chat(tmp_path, server, "-p", "remember the word tangerine")
    session = first.stderr.split("--resume ")[1].split(")")[0]
    listed = ptc("sessions", "--workspace", str(tmp_path), "--json")
    assert listed.returncode == 0, listed.stderr
    sessions = orjson.loads(listed.stdout)["sessions"]
    assert [(s["id"], s["turns"], s["model"]) for s in sessions] == [(session, 1, "openai:m")]
    assert sessions[0]["last_user_message"] == "remember the word tangerine"
    server.replies.append(("stream", ["tangerine"], None))
    again = chat(tmp_path, server, "-p", "which word?", "--resume", session)
    assert again.returncode == 0, again.stderr
    # The person sees where the conversation stood before the new turn.
    shown = "Where the conversation stood (last 1 turns):\n› remember the word tangerine\n  first answer\n"
    assert shown in again.stderr, again.stderr
    sent = [m for m in server.requests[1]["messages"] if m["role"] in ("user", "assistant")]
    assert [m["content"] for m in sent] == ["remember the word tangerine", "first answer", "which word?"]
    human = ptc("sessions", "--workspace", str(tmp_path))
    assert session in human.stdout and "which word?" in human.stdout


def test_lines_from_a_pipe_are_a_session(tmp_path: Path, server: FakeOpenAI) -> None:
    server.replies.append(("stream", ["Piped answer."], None))
    command = [CLI, "chat", "--workspace", str(tmp_path), "--base-url", server.url, "--model", "m", "--tools", "demo"]
    done = subprocess.run(
        command,
        input="hello\n/tools\n/compact\n/nonsense\n/tols\n/exit\nnever sent\n",
        capture_output=True,
        text=True,
        env=chat_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Piped answer.\n" in done.stdout
    assert "run_code [" in done.stdout and "convert_units [" in done.stdout  # /tools
    assert "[applied]" in done.stdout  # /compact
    # An unknown command lists every command, the chat's own /exit too, and the session goes on.
    assert "/nonsense is not a command. The commands are:\n" in done.stdout
    assert "/tols is not a command; did you mean /tools?" in done.stdout
    listing = done.stdout.split("/nonsense is not a command")[1].split("/tols")[0]
    for command in ("/capabilities", "/compact", "/help", "/tools", "/exit"):
        assert f"\n{command} — " in listing, listing
    assert len(server.requests) == 1
    assert done.stderr.rstrip().endswith(f"go on with: ptc-plus chat --resume {session_of(done.stderr)})")


def test_a_marked_tool_is_not_run_unasked_when_there_is_no_terminal(tmp_path: Path, server: FakeOpenAI) -> None:
    code = 'r = await tools.convert_units(value=2, from_unit="km", to_unit="m")\nreturn r["value"]'
    server.replies.append(("stream", [], [run_code_call(code, streamed=True)]))
    server.replies.append(("stream", ["It was not approved."], None))
    done = chat_process(
        tmp_path, server, "-p", "2 km in m?", "--tools", "demo", "--approve", "convert_units,write_file"
    )
    assert done.returncode == 0, done.stderr
    tool_message = server.requests[1]["messages"][-1]
    assert "no terminal to ask on" in tool_message["content"] and "convert_units" in tool_message["content"]
    assert "2000" not in tool_message["content"]  # the tool never ran
