"""A hand-written child that speaks the control protocol badly, one way per scenario.

Run as ``python -I -S crafted_child.py SCENARIO READ_FD WRITE_FD``.
"""

import json
import os
import struct
import sys
import time


def send_raw(fd, body):
    os.write(fd, struct.pack(">I", len(body)) + body)


def send(fd, message):
    send_raw(fd, json.dumps(message).encode())


def read_frame(fd):
    header = b""
    while len(header) < 4:
        chunk = os.read(fd, 4 - len(header))
        if not chunk:
            sys.exit(0)
        header += chunk
    (length,) = struct.unpack(">I", header)
    body = b""
    while len(body) < length:
        body += os.read(fd, length - len(body))
    return json.loads(body)


def call(fd, call_id, tool="slow", args=None):
    send(fd, {"type": "call", "id": call_id, "tool": tool, "args": {} if args is None else args})


def main():
    scenario, fd_in, fd_out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if scenario == "before-ready":
        call(fd_out, 1)
        time.sleep(3600)
    if scenario == "other-version":
        send(fd_out, {"type": "ready", "version": 2, "pid": os.getpid()})
        time.sleep(3600)
    send(fd_out, {"type": "ready", "version": 1, "pid": os.getpid()})
    read_frame(fd_in)  # boot
    if scenario.startswith("fuzz:"):
        # Whatever bytes the fuzz test generated, then gone.
        with open(scenario[len("fuzz:") :], "rb") as handle:
            os.write(fd_out, handle.read())
        os._exit(0)
    if scenario == "oversized":
        os.write(fd_out, struct.pack(">I", 10_000_000))
    elif scenario == "non-json":
        send_raw(fd_out, b"{this is not json")
    elif scenario == "unknown-id":
        call(fd_out, 7)
    elif scenario == "reused-id":
        call(fd_out, 1)
        call(fd_out, 1)
    elif scenario == "flood-calls":
        for call_id in range(1, 130):
            call(fd_out, call_id)
    elif scenario == "unknown-tool":
        call(fd_out, 1, tool="run_code")
    elif scenario == "args-not-object":
        call(fd_out, 1, args=[1, 2])
    elif scenario == "ready-twice":
        send(fd_out, {"type": "ready", "version": 1, "pid": 1})
    elif scenario == "unknown-type":
        send(fd_out, {"type": "exec", "code": "import os"})
    elif scenario == "done-with-host-kind":
        send(fd_out, {"type": "done", "ok": False, "error": {"kind": "timeout"}})
    elif scenario == "log-bad-stream":
        send(fd_out, {"type": "log", "entries": [["secret", "x"]]})
    elif scenario == "discover-unknown-method":
        send(fd_out, {"type": "discover", "id": 1, "method": "exec", "args": {}})
    elif scenario == "discover-args-not-object":
        send(fd_out, {"type": "discover", "id": 1, "method": "search", "args": ["query"]})
    elif scenario == "discover-unknown-argument":
        send(fd_out, {"type": "discover", "id": 1, "method": "tree", "args": {"limit": 5, "path": "/etc"}})
    elif scenario == "discover-reused-id":
        call(fd_out, 1)
        send(fd_out, {"type": "discover", "id": 1, "method": "tree", "args": {}})
    elif scenario == "discover-answered":
        send(fd_out, {"type": "discover", "id": 1, "method": "tree", "args": {"limit": 1}})
        reply = read_frame(fd_in)
        send(fd_out, {"type": "done", "ok": True, "value": reply})
    elif scenario == "never-read":
        # Calls whose replies are never read: the host must not buffer them without bound.
        for call_id in range(1, 2001):
            call(fd_out, call_id, tool="big")
    elif scenario == "pending-bytes":
        call(fd_out, 1, args={"blob": "x" * 600})
        call(fd_out, 2, args={"blob": "x" * 600})
    elif scenario.startswith("never-read:"):
        # N calls, replies never read (the pending count alone does not stop them).
        for call_id in range(1, int(scenario.split(":")[1]) + 1):
            call(fd_out, call_id, tool="big")
    elif scenario.startswith("done-raw:"):
        # A done frame whose value is the raw JSON in the named file (e.g. millions of empty lists).
        with open(scenario[len("done-raw:") :], "rb") as handle:
            send_raw(fd_out, b'{"type":"done","ok":true,"value":' + handle.read() + b"}")
    elif scenario.startswith("call-raw:"):
        # A call frame whose args are the raw JSON in the named file.
        with open(scenario[len("call-raw:") :], "rb") as handle:
            send_raw(fd_out, b'{"type":"call","id":1,"tool":"slow","args":' + handle.read() + b"}")
    time.sleep(3600)


main()
