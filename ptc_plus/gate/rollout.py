"""Deterministic percentage rollout."""

from __future__ import annotations

import hashlib

from ptc_plus.gate_values import DEFAULT_SALT


def rollout_bucket(user_id: str, salt: str = DEFAULT_SALT) -> int:
    """``int(sha256((user_id + salt).encode()).hexdigest(), 16) % 100``: in ``[0, 100)``, stable per (user, salt)."""
    return int(hashlib.sha256((user_id + salt).encode()).hexdigest(), 16) % 100


def in_rollout(user_id: str, salt: str, percent: int) -> bool:
    """Whether the user's bucket is below ``percent`` (0 admits nobody, 100 everybody)."""
    return rollout_bucket(user_id, salt) < percent
