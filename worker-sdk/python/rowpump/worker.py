"""The worker: takes tasks from a queue's ready list, runs a handler, reports the outcome."""

from __future__ import annotations

import threading
from contextlib import nullcontext
from typing import Callable, List, Optional, TypeVar

from redis.exceptions import RedisError

from .details.fetcher import Fetcher
from .details.held_tasks import HeldTasks
from .details.membership import Membership
from .details.options import validated
from .details.reporter import Reporter
from .details.route import Route
from .details.serve_loop import ServeLoop
from .details.worker_log import LogSink, WorkerLog
from .errors import ConnectionError, Error
from .outcome import Outcome
from .protocol.duration import Seconds, to_millis
from .protocol.keys import Keys
from .protocol.messages import format_done, ready_message
from .protocol.outcome_check import DeclaredValues, done_message
from .redis_address import RedisAddress, as_address
from .signals import stop_on_signals
from .task import Task

Handler = Callable[[Task], Outcome]
T = TypeVar("T")

COMMAND_TIMEOUT = 5.0
"""Seconds a Redis command may take beyond the longest block before the connection is
deemed broken."""


class Worker:
    """A worker on one queue. ``run(handler)`` serves it on ``threads`` threads.

    Times are seconds (int or float) or ``timedelta``s:

    - ``heartbeat_ttl`` (10 s): the dispatcher takes our tasks back this long after we die;
      the heartbeat is renewed every third of it.
    - ``queue_wait`` (30 s): how long to wait for a dispatcher to announce the queue before
      the first fetch; then ``Error("unknown queue ...")``.
    - ``fetch_timeout`` (1 s): the longest a serving thread blocks in one fetch; ``stop()``
      takes effect within it.
    - ``timeout`` (none): the handler's deadline per task; a task with a ``timeout_ms`` field
      uses that instead. Past it the task is reported as a retry with reason ``timeout``.

    One process at a time per ``worker_id``: each process (a child after ``os.fork()`` too)
    serves as an incarnation of its own. A restart under the same id waits for the earlier
    process's heartbeat to lapse and gives back what it held; a second live process under the
    id is refused with ``Error`` (README "Protocol").

    ``batch``: tasks a thread takes per Redis round trip; 0 (the default) is adaptive (1, and
    more while handlers are fast and the ready list is full, up to 16), 1 to 1000 exactly that.
    ``log`` receives one line per problem the worker survives; without it they go to stderr.
    """

    def __init__(
        self,
        queue: str,
        redis: "RedisAddress | str | None" = None,
        *,
        threads: int = 1,
        batch: int = 0,
        worker_id: Optional[str] = None,
        heartbeat_ttl: Seconds = 10.0,
        queue_wait: Seconds = 30.0,
        fetch_timeout: Seconds = 1.0,
        timeout: Optional[Seconds] = None,
        log: Optional[LogSink] = None,
    ) -> None:
        address = as_address(redis)
        self._options = validated(queue, address, worker_id, threads, batch, heartbeat_ttl,
                                  queue_wait, fetch_timeout, timeout)
        options = self._options
        self._keys = Keys.of(queue)
        self._stop = threading.Event()
        self._log = WorkerLog(log, options.worker_id)
        self._declared = DeclaredValues(queue)
        self._route = Route(address, self._keys.ready,
                            options.longest_block + COMMAND_TIMEOUT)
        processing = self._keys.processing(options.worker_id)
        self._held = HeldTasks(processing, self._keys.ready, self._log)
        self._fetcher = Fetcher(options, self._keys, self._route, self._held, self._log,
                                self._stop)
        self._reporter = Reporter(options, self._keys, self._route, self._log, self._stop)
        self._membership = Membership(options, self._keys, self._route, self._declared,
                                      self._log, self._stop, lambda: self._reporter.done)

    @property
    def worker_id(self) -> str:
        return self._options.worker_id

    @property
    def bad_messages(self) -> int:
        """Malformed ready messages found and moved to the queue's bad list."""
        return self._fetcher.bad_messages

    def run(self, handler: Handler, *, handle_signals: bool = True) -> None:
        """Runs ``handler`` on ``threads`` threads until ``stop()``, then drains: no new
        fetches, tasks in hand finish and are reported, the heartbeat is deleted. Survives
        Redis outages. Raises ``Error`` if the queue is unknown or Redis refuses us.

        Called on the main thread with ``handle_signals``, SIGTERM and SIGINT call ``stop()``
        while it runs (see ``rowpump.signals``).
        """
        if not callable(handler):
            raise Error("run: the handler is not callable")
        with stop_on_signals(self.stop) if handle_signals else nullcontext(False):
            if not self._membership.join(True):
                return
            try:
                self._serve_on_threads(handler)
            finally:
                self._membership.leave()
            if self._membership.superseded:
                raise Error(self._membership.superseded)

    def _serve_on_threads(self, handler: Handler) -> None:
        errors: List[BaseException] = []

        def serve() -> None:
            try:
                ServeLoop(self._options, handler, self._route, self._fetcher, self._reporter,
                          self._declared, self._log, self._stop).run()
            except BaseException as e:  # a bug in the SDK: stop the others and raise it
                errors.append(e)
                self._stop.set()

        threads = [
            threading.Thread(target=serve, name=f"rowpump-serve-{i}", daemon=True)
            for i in range(self._options.threads)
        ]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)  # short waits keep the main thread responsive to signals
        if errors:
            raise errors[0]

    def stop(self) -> None:
        """Asks ``run()`` to drain and return. Safe from any thread and signal handler."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    # Lower level, for callers who run their own loop; safe from several threads at once.

    def _call(self, what: str, command: Callable[[], T]) -> T:
        self._membership.join(False)
        try:
            return command()
        except RedisError as e:
            raise ConnectionError(f"{what}: {e}") from e

    def fetch(self, timeout: Seconds) -> Optional[Task]:
        """Waits up to ``timeout`` for a task; None if none came or ``stop()`` was called.
        Joins the queue first (starts the heartbeat, which runs until ``close()``)."""
        seconds = to_millis(timeout) / 1000
        return self._call("fetch", lambda: self._fetcher.fetch(seconds))

    def complete(self, task: Task, outcome: Outcome) -> bool:
        """Reports ``outcome``; False if the task had been taken back from this worker (its
        heartbeat lapsed). Raises ``Error`` when a success's values do not fit the queue's."""
        self._membership.join(False)  # the declared values come with it
        problem = self._declared.problem(outcome)
        if problem:
            raise Error(problem)
        done = done_message(task, outcome)
        try:
            return self._call("complete", lambda: self._reporter.report([(task, done)]) == 1)
        finally:
            self._held.release(ready_message(task))

    def extend(self, task: Task, lease: Seconds) -> None:
        """Keeps the claim for ``lease`` from now (the dispatcher sets the row's lease to end
        then), for tasks that run longer than the queue's lease. The task stays in hand."""
        lease_ms = to_millis(lease)
        if lease_ms <= 0:
            raise Error("extend: the lease must be positive")
        text = format_done(task, "extend", lease_ms=lease_ms)

        def push() -> None:
            self._route.run(lambda c: c.rpush(self._keys.done, text))

        self._call("extend", push)

    def close(self) -> None:
        """Signs off (after ``fetch``/``complete`` use) and closes the connections."""
        self._membership.leave()
        self._route.close()

