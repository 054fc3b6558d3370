"""A worker's settings, checked once (worker-sdk/src/options.cpp)."""

from __future__ import annotations

import os
import random
import re
import socket
from dataclasses import dataclass
from typing import Optional

from ..errors import Error
from ..protocol.duration import Seconds, to_millis
from ..protocol.keys import is_valid_name
from ..redis_address import RedisAddress

MIN_HEARTBEAT_TTL_MS = 200


def default_worker_id() -> str:
    """``<short hostname>-<pid>-<6 random hex digits>``."""
    host = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname().split(".")[0])[:40] or "worker"
    return f"{host}-{os.getpid()}-{random.getrandbits(24):06x}"


@dataclass(frozen=True)
class Options:
    queue: str
    redis: RedisAddress
    worker_id: str
    threads: int
    batch: int
    heartbeat_ttl_ms: int
    heartbeat_interval_ms: int
    queue_wait_ms: int
    fetch_timeout_ms: int
    timeout_ms: Optional[int]

    @property
    def longest_block(self) -> float:
        """Seconds a fetch may block in Redis: a block that outlived our heartbeat could move
        a task into the processing list of a worker the dispatcher has already reaped. The
        last beat is at most one interval old when a block starts; half of what is left
        leaves room for delays (worker-sdk/src/fetcher.cpp)."""
        return max((self.heartbeat_ttl_ms - self.heartbeat_interval_ms) / 2, 10) / 1000


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise Error("invalid worker options: " + message)


def validated(
    queue: str,
    redis: RedisAddress,
    worker_id: Optional[str],
    threads: int,
    batch: int,
    heartbeat_ttl: Seconds,
    queue_wait: Seconds,
    fetch_timeout: Seconds,
    timeout: Optional[Seconds],
) -> Options:
    _check(bool(queue), "queue is required")
    _check(is_valid_name(queue), f"queue '{queue}' must be 1 to 64 characters from [A-Za-z0-9_.-]")
    worker_id = worker_id or default_worker_id()
    _check(
        is_valid_name(worker_id),
        f"worker_id '{worker_id}' must be 1 to 64 characters from [A-Za-z0-9_.-]",
    )
    problem = redis.problem()
    _check(not problem, problem)
    _check(1 <= threads <= 1024, f"threads must be between 1 and 1024, not {threads}")
    _check(0 <= batch <= 1000, f"batch must be 0 (adaptive) or between 1 and 1000, not {batch}")
    ttl = to_millis(heartbeat_ttl)
    _check(ttl >= MIN_HEARTBEAT_TTL_MS, f"heartbeat_ttl must be at least 0.2 s, not {ttl} ms")
    fetch = to_millis(fetch_timeout)
    _check(fetch > 0, "fetch_timeout must be positive")
    wait = to_millis(queue_wait)
    _check(wait >= 0, "queue_wait must not be negative")
    deadline = None if timeout is None else to_millis(timeout)
    _check(deadline is None or deadline > 0, "timeout must be positive")
    return Options(
        queue=queue,
        redis=redis,
        worker_id=worker_id,
        threads=threads,
        batch=batch,
        heartbeat_ttl_ms=ttl,
        heartbeat_interval_ms=ttl // 3,
        queue_wait_ms=wait,
        fetch_timeout_ms=fetch,
        timeout_ms=deadline,
    )
