"""One ``run()`` thread (worker-sdk/src/serve_loop.cpp): takes tasks, runs the handler on
them one after another, reports them, takes the next ones."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Deque, List

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .adaptive_batch import AdaptiveBatch
from .backoff import Backoff
from .deadline import Handler, HandlerRunner, task_deadline_ms
from .fetcher import Fetcher
from .options import Options
from .reporter import Report, Reporter
from .route import Route
from .worker_log import WorkerLog
from ..protocol.messages import ready_message
from ..protocol.outcome_check import DeclaredValues, checked_done_message
from ..task import Task


class ServeLoop:
    def __init__(self, options: Options, handler: Handler, route: Route, fetcher: Fetcher,
                 reporter: Reporter, declared: DeclaredValues, log: WorkerLog,
                 stop: threading.Event) -> None:
        self._options = options
        self._handler = handler
        self._route = route
        self._fetcher = fetcher
        self._reporter = reporter
        self._declared = declared
        self._log = log
        self._stop = stop
        self._runner = HandlerRunner()
        self._backoff = Backoff()
        self._hand: Deque[Task] = deque()  # taken, waiting for the handler
        self._reports: List[Report] = []  # handled, waiting to be reported
        self._handling = 0.0  # the handler's time on the reports waiting
        self._adaptive = AdaptiveBatch()

    def run(self) -> None:
        """Until stop is set and every task in hand is reported."""
        try:
            while True:
                if self._hand:
                    self._handle_next()
                    continue
                if self._stop.is_set():
                    return
                self._fetch_one()
        finally:
            self._runner.close()

    def _handle_next(self) -> None:
        task = self._hand.popleft()
        started = time.monotonic()
        deadline = task_deadline_ms(task, self._options.timeout_ms, self._log)
        outcome = self._runner.run(self._handler, task, deadline)
        handled = time.monotonic() - started
        self._handling += handled
        self._reports.append((task, checked_done_message(task, outcome, self._declared, handled)))
        if not self._hand:
            reports, self._reports = self._reports, []
            self._hand.extend(self._report_and_fetch(reports))

    def _take_count(self) -> int:
        return self._options.batch or self._adaptive.next()

    def _blocks(self, count: int) -> bool:
        return count == 1 and self._options.batch <= 1

    def _fetch_one(self) -> None:
        """With nothing in hand: a blocking fetch, or a pause while Redis is away."""
        try:
            task = self._fetcher.fetch(self._options.fetch_timeout_ms / 1000)
            if task is not None:
                self._hand.append(task)
            self._backoff.reset()
            self._log.redis_ok()
            return
        except RedisError as e:
            self._log.redis_failed(e)
        self._stop.wait(self._backoff.next())

    def _report_and_fetch(self, reports: List[Report]) -> List[Task]:
        try:
            return self._report_then_fetch(reports)
        finally:
            for task, _ in reports:  # reported tasks are no longer held, whatever became of it
                self._fetcher.held.release(ready_message(task))

    def _report_then_fetch(self, reports: List[Report]) -> List[Task]:
        if self._stop.is_set():
            self._reporter.report_until_done(reports, False)
            return []
        self._adaptive.handled(len(reports), self._handling)
        self._handling = 0.0
        started = time.monotonic()
        try:
            self._reporter.report(reports)
            self._log.redis_ok()
        except RedisError as e:
            self._log.redis_failed(e)
            maybe_sent = isinstance(e, (RedisConnectionError, RedisTimeoutError))
            self._reporter.report_until_done(reports, maybe_sent)
            return []
        round_trip = time.monotonic() - started
        count = self._take_count()
        try:
            if self._blocks(count):
                task = self._fetcher.fetch(self._options.fetch_timeout_ms / 1000)
                self._adaptive.fetched(count, 0 if task is None else 1, round_trip)
                return [] if task is None else [task]
            messages = self._fetcher.take(count)
            self._adaptive.fetched(count, len(messages), round_trip)
            return self._fetcher.accept_all(messages)
        except RedisError as e:
            self._log.redis_failed(e)
            return []
