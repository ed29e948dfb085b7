"""Keyrings: reading root's keys and planting keys that outlive the run (issue 8 item 2).

The host plants a bait key in root's user keyring; the program tries to find
and read it and to add keys of its own (named after the marker). The guard
looks for marker keys in ``/proc/keys`` after every run; the bait must come
back to no program.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import attrs
import pytest

from .conftest import NR, Hostile, needs_syscall_numbers
from .guard import add_host_key, remove_host_key

pytestmark = [pytest.mark.needs_bwrap, needs_syscall_numbers]

KEY_SPEC_SESSION_KEYRING = -3
KEY_SPEC_USER_KEYRING = -4


@attrs.frozen
class BaitKey:
    serial: int
    description: str
    payload: str


@pytest.fixture
def bait_key() -> Iterator[BaitKey]:
    description = "ptcbait" + secrets.token_hex(8)  # not the marker: the guard must not remove it mid-test
    payload = "ROOT-KEY-SECRET-" + secrets.token_hex(8)
    serial = add_host_key(description, payload.encode())
    yield BaitKey(serial=serial, description=description, payload=payload)
    remove_host_key(serial)


@pytest.mark.asyncio
async def test_roots_key_cannot_be_found_or_read(hostile: Hostile, bait_key: BaitKey) -> None:
    code = f"""
buffer = ctypes.create_string_buffer(256)
return {{
    'search': sys_call({NR["keyctl"]}, ctypes.c_long(10), ctypes.c_long({KEY_SPEC_USER_KEYRING}), b'user',
                       {bait_key.description.encode()!r}, ctypes.c_long(0)),
    'read_by_serial': sys_call({NR["keyctl"]}, ctypes.c_long(11), ctypes.c_long({bait_key.serial}), buffer,
                               ctypes.c_long(256)),
    'describe': sys_call({NR["keyctl"]}, ctypes.c_long(6), ctypes.c_long({bait_key.serial}), buffer,
                         ctypes.c_long(256)),
    'payload': buffer.value.decode(errors='replace'),
    'proc_keys': open('/proc/keys').read() if os.path.exists('/proc/keys') else 'absent',
}}
"""
    found = (await hostile.run(code)).ok()
    assert bait_key.payload not in str(found)
    assert bait_key.description not in found["proc_keys"]
    assert [found["search"], found["read_by_serial"], found["describe"]] == ["EPERM"] * 3, found


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("keyring", "name"),
    [(KEY_SPEC_USER_KEYRING, "user"), (KEY_SPEC_SESSION_KEYRING, "session")],
    ids=["user", "session"],
)
async def test_a_key_cannot_be_planted(hostile: Hostile, keyring: int, name: str) -> None:
    code = f"""
payload = b'planted by the program'
return sys_call({NR["add_key"]}, b'user', ('planted-{name}-' + MARKER).encode(), payload, ctypes.c_size_t(len(payload)),
                ctypes.c_int({keyring}))
"""
    assert (await hostile.run(code)).ok() == "EPERM"  # the guard checks /proc/keys for the marker


@pytest.mark.asyncio
async def test_request_key_and_joining_a_keyring_are_refused(hostile: Hostile) -> None:
    code = f"""
return {{
    'request_key': sys_call({NR["request_key"]}, b'user', ('requested-' + MARKER).encode(), b'callout',
                            ctypes.c_int({KEY_SPEC_USER_KEYRING})),
    'join_session': sys_call({NR["keyctl"]}, ctypes.c_long(1), ('joined-' + MARKER).encode()),
    'user_keyring_id': sys_call({NR["keyctl"]}, ctypes.c_long(0), ctypes.c_long({KEY_SPEC_USER_KEYRING}),
                                ctypes.c_long(1)),
}}
"""
    results = (await hostile.run(code)).ok()
    assert results == dict.fromkeys(results, "EPERM"), results
