"""Rollout bucketing: the documented formula, deterministic per (user, salt)."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from ptc_plus.gate import DEFAULT_SALT, in_rollout, rollout_bucket

TWENTY_USERS = [f"u-{n:02d}" for n in range(20)]


def test_bucket_is_the_documented_formula() -> None:
    for user in TWENTY_USERS:
        digest = hashlib.sha256((user + "ptc-rollout").encode()).hexdigest()
        assert rollout_bucket(user) == int(digest, 16) % 100
    assert DEFAULT_SALT == "ptc-rollout"


def test_same_user_same_bucket() -> None:
    first = [rollout_bucket(user, DEFAULT_SALT) for user in TWENTY_USERS]
    again = [rollout_bucket(user, DEFAULT_SALT) for user in reversed(TWENTY_USERS)][::-1]
    assert first == again


def test_a_different_salt_rebuckets_at_least_one_of_twenty_users() -> None:
    default = {user: rollout_bucket(user, DEFAULT_SALT) for user in TWENTY_USERS}
    salted = {user: rollout_bucket(user, "other-salt") for user in TWENTY_USERS}
    moved = [user for user in TWENTY_USERS if default[user] != salted[user]]
    assert len(moved) >= 1


@given(user=st.text(), salt=st.text())
def test_bucket_is_in_range_and_stable(user: str, salt: str) -> None:
    bucket = rollout_bucket(user, salt)
    assert 0 <= bucket < 100
    assert bucket == rollout_bucket(user, salt)


@given(user=st.text(), salt=st.text(), low=st.integers(0, 100), high=st.integers(0, 100))
def test_raising_the_percent_never_removes_a_user(user: str, salt: str, low: int, high: int) -> None:
    low, high = min(low, high), max(low, high)
    if in_rollout(user, salt, low):
        assert in_rollout(user, salt, high)
    assert not in_rollout(user, salt, 0)
    assert in_rollout(user, salt, 100)
