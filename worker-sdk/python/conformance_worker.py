#!/usr/bin/env python3
"""rowpump conformance worker for the Python SDK: a worker whose behaviour tests choose by
flags, the same flags as the C++ tests/tools/test_worker.cpp plus a few.

  --redis-host H --redis-port P
  --sentinel HOST:PORT (repeatable) --sentinel-master NAME   Sentinel instead of host/port
  --cluster HOST:PORT (repeatable)                            Cluster seeds instead
  --queue Q --threads N --batch B --worker-id ID
  --heartbeat-ttl-ms MS --queue-wait-ms MS --fetch-timeout-ms MS
  --work-ms MS                      sleep this long in each task
  --fail-mode none|retry|fail|throw|hang   (hang: never returns unless cancelled by the deadline)
  --retry-delay-ms MS               with retry: the delay it asks for
  --value NAME=VALUE                sent with success (repeatable)
  --extend-ms MS                    call extend(task, MS) before working
  --timeout-ms MS                   the handler deadline
  --log FILE                        one line per handled task, written with one O_APPEND write:
                                    "<id> <token> <attempt>" then " name=value" per task field
                                    (id and values percent-encoded as on the wire; NULL as a
                                    bare name)
  --max-tasks N                     stop after N handled tasks
  --mode thread|async               Worker (default) or AsyncWorker (--threads is its concurrency)
  --fork N                          build the worker, then fork N children that each run it (a
                                    worker built before fork); the parent passes SIGTERM/SIGINT
                                    on, prints "fork: child <i> exit <code>" as each ends and
                                    exits 0 once all have

Prints "worker_id=<id>" on stdout once started. SIGTERM/SIGINT: finish the tasks in hand,
exit 0. Exit 1 on failure (unknown queue, ...), 2 on bad flags.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import rowpump
from rowpump.protocol.messages import percent_encode

FAIL_MODES = ("none", "retry", "fail", "throw", "hang")


@dataclass
class Args:
    redis: rowpump.RedisAddress = field(default_factory=rowpump.RedisAddress)
    queue: str = ""
    threads: int = 1
    batch: int = 0
    worker_id: Optional[str] = None
    heartbeat_ttl_ms: int = 10000
    queue_wait_ms: int = 30000
    fetch_timeout_ms: int = 1000
    work_ms: int = 0
    fail_mode: str = "none"
    retry_delay_ms: Optional[int] = None
    values: Dict[str, str] = field(default_factory=dict)
    extend_ms: Optional[int] = None
    timeout_ms: Optional[int] = None
    log: str = ""
    max_tasks: int = 0
    mode: str = "thread"
    forks: int = 0


class BadFlags(Exception):
    pass


def number(flag: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise BadFlags(f"{flag} takes a number, not '{value}'") from None


def apply_flag(a: Args, flag: str, value: str) -> None:
    ints = {
        "--redis-port": None, "--threads": "threads", "--batch": "batch",
        "--heartbeat-ttl-ms": "heartbeat_ttl_ms", "--queue-wait-ms": "queue_wait_ms",
        "--fetch-timeout-ms": "fetch_timeout_ms", "--work-ms": "work_ms",
        "--retry-delay-ms": "retry_delay_ms", "--extend-ms": "extend_ms",
        "--timeout-ms": "timeout_ms", "--max-tasks": "max_tasks", "--fork": "forks",
    }
    if flag == "--redis-port":
        a.redis.port = number(flag, value)
    elif flag in ints:
        setattr(a, str(ints[flag]), number(flag, value))
    elif flag == "--redis-host":
        a.redis.host = value
    elif flag == "--sentinel":
        a.redis.sentinels.append(value)
    elif flag == "--sentinel-master":
        a.redis.master = value
    elif flag == "--cluster":
        a.redis.cluster.append(value)
    elif flag == "--queue":
        a.queue = value
    elif flag == "--worker-id":
        a.worker_id = value
    elif flag == "--log":
        a.log = value
    elif flag == "--fail-mode":
        if value not in FAIL_MODES:
            raise BadFlags("--fail-mode takes " + ", ".join(FAIL_MODES))
        a.fail_mode = value
    elif flag == "--value":
        name, eq, text = value.partition("=")
        if not eq:
            raise BadFlags("--value takes NAME=VALUE")
        a.values[name] = text
    elif flag == "--mode":
        if value not in ("thread", "async"):
            raise BadFlags("--mode takes thread or async")
        a.mode = value
    else:
        raise BadFlags(f"unknown flag {flag}")


def parse_args(argv: List[str]) -> Args:
    a = Args()
    for i in range(0, len(argv), 2):
        if i + 1 >= len(argv):
            raise BadFlags(f"missing value after {argv[i]}")
        apply_flag(a, argv[i], argv[i + 1])
    return a


class TaskLog:
    """One write() per line with O_APPEND: lines from several threads (and from a worker
    killed with SIGKILL) never interleave or wait in a buffer."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644) \
            if path else -1

    def record(self, task: rowpump.Task) -> None:
        if self._fd < 0:
            return
        parts = [percent_encode(task.raw_id), task.token, str(task.attempt)]
        for name, value in task.fields.items():
            parts.append(name if value is None else f"{name}={percent_encode(value)}")
        line = (" ".join(parts) + "\n").encode()
        if os.write(self._fd, line) != len(line):
            raise OSError("cannot write the task log")


class Counter:
    def __init__(self, limit: int, stop) -> None:  # type: ignore[no-untyped-def]
        self._limit, self._stop = limit, stop
        self._count = 0
        self._lock = threading.Lock()

    def handled(self) -> None:
        with self._lock:
            self._count += 1
            reached = self._limit > 0 and self._count >= self._limit
        if reached:
            self._stop()


class EarlySignals:
    """SIGTERM/SIGINT from the very start: a signal that comes before run() has put its own
    handlers in place (while Python starts, or right after "worker_id=" is printed) still
    means "drain and exit 0", never the default action."""

    def __init__(self) -> None:
        self._requested = False
        self._stop: Optional[Callable[[], None]] = None
        for number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(number, self._on_signal)

    def _on_signal(self, number: int, frame: object) -> None:
        self._requested = True
        if self._stop is not None:
            self._stop()

    def attach(self, stop: Callable[[], None]) -> None:
        self._stop = stop
        if self._requested:
            stop()


def outcome_for(a: Args, task: rowpump.Task) -> rowpump.Outcome:
    if a.fail_mode == "retry":
        delay = None if a.retry_delay_ms is None else a.retry_delay_ms / 1000
        return rowpump.retry("test worker: retry requested", delay)
    if a.fail_mode == "fail":
        return rowpump.fail("test worker: fail requested")
    if a.fail_mode == "throw":
        raise RuntimeError(f"test worker: handler threw for {task.id}")
    return rowpump.ok(a.values)


def die_with_parent() -> None:
    """A test that kills the --fork parent ends its children too (Linux prctl)."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def forked(a: Args, signals: EarlySignals, serve: Callable[[], None]) -> None:
    """Runs ``serve`` here, or with --fork in that many children of this process."""
    if a.forks == 0:
        serve()
        return
    children: Dict[int, int] = {}
    for i in range(1, a.forks + 1):
        pid = os.fork()
        if pid == 0:
            die_with_parent()
            code = 0
            try:
                serve()
            except (rowpump.Error, OSError) as e:
                print(f"conformance_worker: {e}", file=sys.stderr)
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        children[pid] = i

    def pass_on() -> None:
        for pid in children:
            os.kill(pid, signal.SIGTERM)

    signals.attach(pass_on)
    while children:
        pid, status = os.waitpid(-1, 0)
        print(f"fork: child {children.pop(pid)} exit {os.waitstatus_to_exitcode(status)}",
              flush=True)


def run_threads(a: Args, task_log: TaskLog, signals: EarlySignals) -> None:
    worker = rowpump.Worker(
        a.queue, a.redis, threads=a.threads, batch=a.batch, worker_id=a.worker_id,
        heartbeat_ttl=a.heartbeat_ttl_ms / 1000, queue_wait=a.queue_wait_ms / 1000,
        fetch_timeout=a.fetch_timeout_ms / 1000,
        timeout=None if a.timeout_ms is None else a.timeout_ms / 1000)
    signals.attach(worker.stop)
    print(f"worker_id={worker.worker_id}", flush=True)
    counter = Counter(a.max_tasks, worker.stop)

    def handle(task: rowpump.Task) -> rowpump.Outcome:
        if a.extend_ms is not None:
            worker.extend(task, a.extend_ms / 1000)
        if a.work_ms > 0:
            time.sleep(a.work_ms / 1000)
        task_log.record(task)
        counter.handled()
        if a.fail_mode == "hang":
            task.cancelled.wait()
            return rowpump.retry("test worker: cancelled")
        return outcome_for(a, task)

    forked(a, signals, lambda: worker.run(handle))


def run_async(a: Args, task_log: TaskLog, signals: EarlySignals) -> None:
    worker = rowpump.AsyncWorker(
        a.queue, a.redis, concurrency=a.threads, worker_id=a.worker_id,
        heartbeat_ttl=a.heartbeat_ttl_ms / 1000, queue_wait=a.queue_wait_ms / 1000,
        fetch_timeout=a.fetch_timeout_ms / 1000,
        timeout=None if a.timeout_ms is None else a.timeout_ms / 1000)
    signals.attach(worker.stop)
    print(f"worker_id={worker.worker_id}", flush=True)
    counter = Counter(a.max_tasks, worker.stop)

    async def handle(task: rowpump.Task) -> rowpump.Outcome:
        if a.extend_ms is not None:
            await worker.extend(task, a.extend_ms / 1000)
        if a.work_ms > 0:
            await asyncio.sleep(a.work_ms / 1000)
        task_log.record(task)
        counter.handled()
        if a.fail_mode == "hang":
            await asyncio.Event().wait()
        return outcome_for(a, task)

    forked(a, signals, lambda: asyncio.run(worker.run(handle)))


def main(argv: List[str]) -> int:
    signals = EarlySignals()
    try:
        args = parse_args(argv)
    except BadFlags as e:
        print(f"conformance_worker: {e}", file=sys.stderr)
        return 2
    try:
        task_log = TaskLog(args.log)
        (run_async if args.mode == "async" else run_threads)(args, task_log, signals)
        return 0
    except (rowpump.Error, OSError) as e:
        print(f"conformance_worker: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
