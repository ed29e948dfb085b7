"""Network: no route out of the sandbox under the default policy (``network = false``).

Host-side listeners (TCP, UDP, abstract Unix socket) must never see a
connection or a datagram from the program; raw and packet sockets and
interface changes need privileges the program does not have.
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import Iterator

import pytest

from .conftest import Hostile

pytestmark = [pytest.mark.needs_bwrap]


@pytest.fixture
def tcp_listener() -> Iterator[socket.socket]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        yield listener


def nothing_accepted(listener: socket.socket) -> bool:
    try:
        connection, _ = listener.accept()
    except BlockingIOError:
        return True
    connection.close()
    return False


@pytest.mark.asyncio
async def test_the_hosts_loopback_is_unreachable(hostile: Hostile, tcp_listener: socket.socket) -> None:
    port = tcp_listener.getsockname()[1]
    code = f"""
import socket
return {{
    'ipv4': attempt(lambda: socket.create_connection(('127.0.0.1', {port}), timeout=3)),
    'ipv6': attempt(lambda: socket.create_connection(('::1', {port}), timeout=3)),
}}
"""
    results = (await hostile.run(code)).ok()
    assert results["ipv4"] == "ECONNREFUSED", results
    assert results["ipv6"] in ("ECONNREFUSED", "EADDRNOTAVAIL", "ENETUNREACH"), results
    assert nothing_accepted(tcp_listener)


@pytest.mark.asyncio
async def test_external_addresses_are_unreachable(hostile: Hostile) -> None:
    code = """
import socket
results = {}
for host, port in (('1.1.1.1', 53), ('8.8.8.8', 443), ('10.0.0.1', 22)):
    results[host] = attempt(lambda: socket.create_connection((host, port), timeout=3))
try:
    socket.getaddrinfo('example.com', 443)
    results['dns'] = 'resolved'
except socket.gaierror as error:
    results['dns'] = 'gaierror'
return results
"""
    results = (await hostile.run(code)).ok()
    # gVisor's own network stack (only loopback, ADR 0127) answers "no route to host" where Linux says "network".
    refusal = "EHOSTUNREACH" if hostile.executor == "gvisor" else "ENETUNREACH"
    assert results == {"1.1.1.1": refusal, "8.8.8.8": refusal, "10.0.0.1": refusal, "dns": "gaierror"}


@pytest.mark.asyncio
async def test_only_loopback_is_visible(hostile: Hostile) -> None:
    code = "import socket\nreturn sorted(name for _, name in socket.if_nameindex())"
    assert (await hostile.run(code)).ok() == ["lo"]


@pytest.mark.asyncio
async def test_raw_and_packet_sockets_are_refused(hostile: Hostile) -> None:
    code = """
import socket
return {
    'raw_icmp': attempt(socket.socket, socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
    'raw_tcp': attempt(socket.socket, socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP),
    'packet': attempt(socket.socket, socket.AF_PACKET, socket.SOCK_RAW, 0x0300),
}
"""
    results = (await hostile.run(code)).ok()
    assert results == dict.fromkeys(results, "EPERM"), results


@pytest.mark.asyncio
async def test_netlink_cannot_change_interfaces(hostile: Hostile) -> None:
    code = """
import fcntl, socket, struct
def rta(kind, payload):
    length = 4 + len(payload)
    return struct.pack('HH', length, kind) + payload + b'\\0' * ((4 - length % 4) % 4)
route = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE
route.bind((0, 0))
body = struct.pack('BxHiII', 0, 0, 0, 0, 0) + rta(3, b'ptcdummy\\0') + rta(18, rta(1, b'dummy\\0'))
request = struct.pack('IHHII', 16 + len(body), 16, 0x1 | 0x4 | 0x400 | 0x200, 1, 0) + body  # RTM_NEWLINK, ACK
route.send(request)
reply = route.recv(65536)
kind = struct.unpack('H', reply[4:6])[0]
error = -struct.unpack('i', reply[16:20])[0] if kind == 2 else None  # NLMSG_ERROR
lo_down = attempt(fcntl.ioctl, socket.socket(), 0x8914, struct.pack('16sH14x', b'lo', 0))  # SIOCSIFFLAGS
return {'new_link': 'allowed' if error == 0 else errname(error), 'lo_down': lo_down}
"""
    results = (await hostile.run(code)).ok()
    if hostile.executor == "gvisor":
        # gVisor's netstack has no interface ioctls (ENOTTY) and makes no link: refused, in its own words.
        assert results["lo_down"] == "ENOTTY" and results["new_link"] not in ("allowed", None), results
        return
    assert results == {"new_link": "EPERM", "lo_down": "EPERM"}


@pytest.mark.asyncio
async def test_host_abstract_unix_sockets_are_unreachable(hostile: Hostile) -> None:
    name = "\0ptcbait" + secrets.token_hex(8)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(name)
        listener.listen()
        listener.setblocking(False)
        code = f"""
import socket
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
return attempt(client.connect, {name!r})
"""
        assert (await hostile.run(code)).ok() == "ECONNREFUSED"
        assert nothing_accepted(listener)


def _landlock_abi() -> int:
    """The running kernel's Landlock ABI, asked as the sandbox asks it (``landlock_create_ruleset`` is 444 on every
    architecture; ``LANDLOCK_CREATE_RULESET_VERSION``)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(int(libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint(1))), 0)


LANDLOCK_ABI = _landlock_abi()


@pytest.mark.asyncio
@pytest.mark.skipif(
    LANDLOCK_ABI < 6,
    reason=f"NOT CHECKED: this kernel's Landlock ABI is {LANDLOCK_ABI}; refusing abstract sockets with network = true "
    "needs LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (ABI 6, Linux 6.12), so the host's abstract sockets are reachable here",
)
async def test_host_abstract_unix_sockets_are_unreachable_with_network(hostile: Hostile) -> None:
    # network = true shares the host's network namespace, and with it the abstract socket namespace (ADR 0088).
    name = "\0ptcbait" + secrets.token_hex(8)
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener,
        socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as receiver,
    ):
        listener.bind(name)
        listener.listen()
        listener.setblocking(False)
        receiver.bind(name + "-dgram")
        receiver.setblocking(False)
        code = f"""
import socket
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
# Its own abstract sockets still work: the scope fences off only those bound outside the sandbox.
own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
own.bind({name!r} + '-own')
own.listen()
mine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
return {{
    'connect': attempt(client.connect, {name!r}),
    'sendto': attempt(sender.sendto, MARKER.encode(), {name!r} + '-dgram'),
    'own': attempt(mine.connect, {name!r} + '-own'),
}}
"""
        results = (await hostile.run(code, network=True)).ok()
        assert results == {"connect": "EPERM", "sendto": "EPERM", "own": "allowed"}
        assert nothing_accepted(listener)
        with pytest.raises(BlockingIOError):
            receiver.recv(1024)


@pytest.mark.asyncio
async def test_no_datagram_reaches_a_host_udp_socket(hostile: Hostile) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind(("127.0.0.1", 0))
        receiver.setblocking(False)
        port = receiver.getsockname()[1]
        code = f"""
import socket
sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
return [attempt(sender.sendto, MARKER.encode(), ('127.0.0.1', {port})) for _ in range(5)]
"""
        (await hostile.run(code)).ok()
        with pytest.raises(BlockingIOError):
            receiver.recv(1024)
