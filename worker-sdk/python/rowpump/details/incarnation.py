"""A worker process is its worker id plus an incarnation chosen at random when it joins (again in
a child after fork): common/lua/beat.lua, worker-sdk/src/membership.cpp. This module holds what
the thread and the asyncio worker share: the beat's arguments, reading its reply, and what a
starting worker makes of a heartbeat another incarnation holds."""

from __future__ import annotations

import secrets
from typing import Any, List, Optional

from .worker_log import log_text
from ..errors import Error
from ..protocol.keys import Keys
from ..protocol.messages import percent_encode

TAKE_OVER_POLL = 0.1
"""Seconds between looks at a heartbeat another incarnation holds, while starting."""


def new_incarnation() -> str:
    return secrets.token_hex(8)


def beat_keys(keys: Keys, worker_id: str) -> List[str]:
    return [keys.heartbeat(worker_id), keys.workers, keys.processing(worker_id), keys.done]


def beat_args(worker_id: str, info: str, ttl_ms: int, incarnation: str, first: bool) -> List[str]:
    args = [worker_id, f"{info};incarnation={incarnation}", str(ttl_ms), incarnation]
    if first:
        reason = percent_encode(f"worker {worker_id} restarted before reporting it")
        args.append(f" retry reason={reason} delay=0ms")
    return args


def beat_reply(reply: Any) -> Optional[str]:
    """None when the beat went through, else the value of the heartbeat another incarnation
    holds."""
    if isinstance(reply, list):
        other = reply[0] if reply else ""
        return other.decode("utf-8", "replace") if isinstance(other, bytes) else str(other)
    return None


def left_tasks(reply: Any) -> int:
    return reply if isinstance(reply, int) else 0


def in_use(worker_id: str, heartbeat: str, other: str, why: str) -> Error:
    return Error(
        f"worker id '{worker_id}' is in use by another live process ({why}) (heartbeat "
        f"{heartbeat}: '{log_text(other, 200)}'); give each process a worker_id of its own"
    )


def taken_over(worker_id: str, heartbeat: str, other: str) -> str:
    return (
        f"worker id '{worker_id}' was taken over by another process while this one's heartbeat "
        f"had lapsed (heartbeat {heartbeat}: '{log_text(other, 200)}'); give each process a "
        "worker_id of its own"
    )


def renewed(other: str, last_ttl: int, value: str, ttl: int) -> Optional[str]:
    """Why the heartbeat first seen as ``other`` with PTTL ``last_ttl`` belongs to a live
    process, now that it reads ``value`` with PTTL ``ttl``; None while it may be a dead one's."""
    if last_ttl == -1:
        return "its heartbeat has no TTL"
    if value != other or ttl > last_ttl:
        return "it renewed its heartbeat"
    return None
