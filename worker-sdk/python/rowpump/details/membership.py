"""A worker's membership of its queue (worker-sdk/src/membership.cpp): joining (the queue is
announced, the heartbeat beats), staying listed, and leaving."""

from __future__ import annotations

import os
import threading
import time
from typing import Callable, Optional

from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    BusyLoadingError,
    ConnectionError as RedisConnectionError,
    RedisError,
    TimeoutError as RedisTimeoutError,
)

from . import incarnation
from .backoff import Backoff
from .options import Options
from .route import Route
from .worker_log import WorkerLog, log_text
from ..errors import ConnectionError, Error
from ..protocol import scripts
from ..protocol.keys import Keys
from ..protocol.outcome_check import DeclaredValues
from ..protocol.protocol_version import protocol_mismatch
from ..protocol.worker_info import format_worker_info

QUEUE_POLL = 0.2
"""Seconds between looks for the queue's meta while waiting for it."""


def unknown_queue(options: Options, keys: Keys) -> Error:
    return Error(
        f"unknown queue '{options.queue}': no dispatcher has announced it "
        f"(key {keys.meta} is missing)"
    )


def queue_announced(options: Options, declared: DeclaredValues, exists: int,
                    values: Optional[str], protocol: Optional[str]) -> bool:
    """What a look at the queue's meta hash found (EXISTS, HGET values, HGET protocol): False
    while no dispatcher announced the queue; else the declared values are taken, after the
    protocol version rule (docs/protocol.md "Protocol version") let this worker in."""
    if not exists:
        return False
    mismatch = protocol_mismatch(protocol)
    if mismatch:
        raise Error(f"queue '{options.queue}': {mismatch}")
    declared.update(values or "")
    return True


def is_outage(error: BaseException) -> bool:
    """An error that waiting can fix; any other error at start-up is a configuration
    problem (wrong password, missing ACL permission, a key of the wrong type)."""
    if isinstance(error, (AuthenticationError, AuthorizationError)):
        return False
    return isinstance(error, (RedisConnectionError, RedisTimeoutError, BusyLoadingError))


class Membership:
    def __init__(
        self,
        options: Options,
        keys: Keys,
        route: Route,
        declared: DeclaredValues,
        log: WorkerLog,
        stop: threading.Event,
        done: Callable[[], int] = lambda: 0,
    ) -> None:
        self._options = options
        self._keys = keys
        self._processing = keys.processing(options.worker_id)
        self._heartbeat_key = keys.heartbeat(options.worker_id)
        self._done = done  # reports taken so far, for the heartbeat's worker info
        self._route = route
        self._declared = declared
        self._log = log
        self._stop = stop
        self._lock = threading.Lock()
        self._joined = False
        self._beat_on = ""  # the node of the last beat that went through
        self._quit: Optional[threading.Event] = None
        self._thread: Optional[threading.Thread] = None
        self._incarnation = ""  # chosen at each join
        self._pid = 0  # the process that joined
        self.superseded = ""
        """Why this process gave the worker id up while serving (another incarnation took the
        heartbeat over: ours had lapsed), "" while it holds it; set before it stops."""

    def join(self, survive_outages: bool) -> bool:
        """Before the first fetch; returns at once when already joined. With
        ``survive_outages``, waits out Redis outages and returns False if stop came first;
        without, raises ConnectionError. Raises Error when the queue stays unknown past
        ``queue_wait``, and when another live process holds the worker id. In a child after
        fork (another pid), starts over with an incarnation of its own."""
        if self._joined and self._pid == os.getpid():
            return True
        with self._lock:
            if self._joined:
                if self._pid == os.getpid():
                    return True
                self._joined = False  # a child after fork: the heartbeat thread is the parent's
            if self.superseded:
                raise Error(self.superseded)
            self._incarnation = incarnation.new_incarnation()
            self._pid = os.getpid()
            deadline = time.monotonic() + self._options.queue_wait_ms / 1000
            backoff = Backoff()
            while True:
                try:
                    if not self._wait_for_queue(deadline, survive_outages):
                        return False
                    # The first beat precedes the first fetch: the dispatcher never sees
                    # tasks in our processing list without a heartbeat.
                    other = self._beat(first=True)
                    if other is not None and not self._take_over(other):
                        return False
                    break
                except RedisError as e:
                    self._route.broken(e)
                    if not is_outage(e):
                        raise Error(f"redis {self._options.redis.describe()}: {e}") from e
                    if not survive_outages:
                        raise ConnectionError(str(e)) from e
                    self._log.redis_failed(e)
                if self._stop.wait(backoff.next()):
                    return False
            self._quit = threading.Event()
            self._thread = threading.Thread(
                target=self._beat_loop, args=(self._quit,), name="rowpump-heartbeat", daemon=True
            )
            self._thread.start()
            self._joined = True
            return True

    def _wait_for_queue(self, deadline: float, stoppable: bool) -> bool:
        while True:
            def look(client):  # type: ignore[no-untyped-def]
                pipe = client.pipeline(transaction=False)
                pipe.exists(self._keys.meta)
                pipe.hget(self._keys.meta, "values")
                pipe.hget(self._keys.meta, "protocol")
                return pipe.execute()

            if queue_announced(self._options, self._declared, *self._route.run(look)):
                return True
            now = time.monotonic()
            if now >= deadline:
                raise unknown_queue(self._options, self._keys)
            if stoppable and self._stop.is_set():
                return False
            time.sleep(min(QUEUE_POLL, deadline - now))

    def _beat(self, first: bool = False) -> Optional[str]:
        """beat.lua: None when the beat went through, else the heartbeat's value (another
        incarnation's)."""
        # With Sentinel or Cluster, the queue's node changing means a failover (or a
        # resharding), which may have lost reports: the tasks in our processing list go back
        # (docs/operations.md "What a failover costs"). Judged by the node, not by a failure.
        replicated = self._options.redis.replicated
        node = self._route.node() if replicated else ""
        if replicated and self._beat_on and node != self._beat_on:
            self._give_back()
        keys = incarnation.beat_keys(self._keys, self._options.worker_id)
        args = incarnation.beat_args(
            self._options.worker_id,
            format_worker_info(self._done(), self._options.heartbeat_ttl_ms),
            self._options.heartbeat_ttl_ms, self._incarnation, first)
        reply = self._route.run(lambda c: scripts.BEAT.call(c, keys, args))
        other = incarnation.beat_reply(reply)
        if other is not None:
            return other
        left = incarnation.left_tasks(reply)
        if left:
            self._log.line(f"gave {left} task(s) left in {self._processing} by an earlier process "
                           f"of worker id '{self._options.worker_id}' back as retries")
        values = self._route.run(lambda c: c.hget(self._keys.meta, "values"))
        if values is not None:  # the dispatcher may be restarted with another on_success
            self._declared.update(values)
        self._log.redis_ok()
        self._beat_on = node
        return None

    def _take_over(self, other: str) -> bool:
        """After the first beat found ``other`` in the heartbeat: waits until it lapses (then
        beats) or is renewed (then raises Error). False when stop came first."""
        self._log.line(f"worker id '{self._options.worker_id}' has a heartbeat of another "
                       "process; starting once it lapses")

        def look(client):  # type: ignore[no-untyped-def]
            pipe = client.pipeline(transaction=False)
            pipe.get(self._heartbeat_key)
            pipe.pttl(self._heartbeat_key)
            return pipe.execute()

        last_ttl = self._route.run(lambda c: c.pttl(self._heartbeat_key))
        while True:
            why = incarnation.renewed(other, last_ttl, other, last_ttl)
            if why:
                raise incarnation.in_use(self._options.worker_id, self._heartbeat_key, other, why)
            if self._stop.wait(incarnation.TAKE_OVER_POLL):
                return False
            value, ttl = self._route.run(look)
            if value is None:  # it lapsed or its process stopped: ours, unless another came first
                again = self._beat(first=True)
                if again is None:
                    return True
                other = again
                last_ttl = self._route.run(lambda c: c.pttl(self._heartbeat_key))
                continue
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            why = incarnation.renewed(other, last_ttl, value, ttl)
            if why:
                raise incarnation.in_use(self._options.worker_id, self._heartbeat_key, other, why)
            last_ttl = ttl

    def _keep_beating(self) -> None:
        other = self._beat()
        if other is not None:
            # Ours lapsed and another process took the worker id over (and gave back what we
            # held): stop taking tasks into a list that is no longer ours.
            self.superseded = incarnation.taken_over(
                self._options.worker_id, self._heartbeat_key, other)
            self._log.line(self.superseded)
            self._stop.set()

    def _give_back(self) -> None:
        given = self._route.run(
            lambda c: scripts.GIVE_BACK.call(c, [self._processing, self._keys.ready], [])
        )
        if given:
            self._log.line(
                f"Redis failed over: gave {given} task(s) in hand back to the ready list; "
                "they run again"
            )

    def _beat_loop(self, quit_event: threading.Event) -> None:
        interval = self._options.heartbeat_interval_ms / 1000
        backoff = Backoff()
        wait = interval
        while not quit_event.wait(wait):
            try:
                self._keep_beating()
                backoff.reset()
                wait = interval
            except RedisError as e:
                self._log.redis_failed(e)
                wait = min(backoff.next(), interval)
            except Exception as e:  # a bug must not stop the heartbeat silently
                self._log.line(f"heartbeat failed: {log_text(repr(e))}")
                wait = min(backoff.next(), interval)

    def leave(self) -> None:
        """Stops the heartbeat and signs off (deletes the heartbeat; unlists the worker if
        its processing list is empty); the next join starts over."""
        with self._lock:
            if not self._joined:
                return
            assert self._quit is not None and self._thread is not None
            self._joined = False
            if self._pid != os.getpid():  # a child after fork: the heartbeat is the parent's
                return
            self._quit.set()  # first, so no beat can list us again after we leave
            self._thread.join()
            keys = [self._heartbeat_key, self._processing, self._keys.workers]
            backoff = Backoff()
            for attempt in (1, 2, 3):
                try:
                    left = self._route.run(
                        lambda c: scripts.LEAVE.call(
                            c, keys, [self._options.worker_id, self._incarnation])
                    )
                    if left == -1:
                        self._log.line("left the heartbeat alone: another process holds worker "
                                       f"id '{self._options.worker_id}'")
                    elif left:
                        self._log.line(
                            f"{left} task(s) left in {self._processing}; "
                            "the dispatcher takes them back"
                        )
                    return
                except RedisError as e:
                    if attempt == 3:
                        self._log.line(
                            f"could not sign off ({e}); the heartbeat lapses on its own"
                        )
                        return
                time.sleep(backoff.next())
