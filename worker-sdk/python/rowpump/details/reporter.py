"""Reporting outcomes with the complete script (worker-sdk/src/reporter.cpp)."""

from __future__ import annotations

import threading
import time
from typing import List, Optional, Sequence, Tuple

from redis.exceptions import RedisError

from .backoff import Backoff
from .options import Options
from .route import Route
from .worker_log import WorkerLog, log_text
from ..protocol import scripts
from ..protocol.keys import Keys
from ..protocol.messages import ready_message
from ..task import Task

Report = Tuple[Task, str]
"""A task and its done message."""


def tasks_text(reports: Sequence[Report]) -> str:
    first = f"'{log_text(reports[0][0].id)}'"
    return f"task {first}" if len(reports) == 1 else f"{len(reports)} tasks ({first}, ...)"


def refused_text(reports: Sequence[Report], accepted: int) -> str:
    refused = len(reports) - accepted
    if refused <= 0:
        return ""
    if len(reports) == 1:
        return (f"the report on {tasks_text(reports)} came too late: "
                "the task had been taken back from this worker")
    return (f"the reports on {refused} of {tasks_text(reports)} came too late: "
            "the tasks had been taken back from this worker")


class Reporter:
    def __init__(self, options: Options, keys: Keys, route: Route, log: WorkerLog,
                 stop: threading.Event) -> None:
        self._options = options
        self._keys = [keys.processing(options.worker_id), keys.done]
        self._processing = self._keys[0]
        self._route = route
        self._log = log
        self._stop = stop
        self._done_lock = threading.Lock()
        self._done = 0

    @property
    def done(self) -> int:
        """Reports the done list took so far, for the heartbeat's worker info."""
        with self._done_lock:
            return self._done

    def report(self, reports: Sequence[Report], maybe_sent: bool = False) -> int:
        """How many of ``reports`` were accepted; logs the refused ones. Raises redis errors."""
        args: List[str] = []
        for task, done in reports:
            args += (ready_message(task), done)
        accepted = int(self._route.run(lambda c: scripts.COMPLETE.call(c, self._keys, args)))
        with self._done_lock:
            self._done += accepted
        # After a broken connection a refusal may only mean that the first attempt got through.
        text = "" if maybe_sent else refused_text(reports, accepted)
        if text:
            self._log.line(text)
        return accepted

    def report_until_done(self, reports: Sequence[Report], maybe_sent: bool) -> None:
        """Retries through Redis outages; once stopping, gives up after heartbeat_ttl (the
        dispatcher takes the tasks back by then anyway)."""
        backoff = Backoff()
        failing_since: Optional[float] = None
        while True:
            try:
                self.report(reports, maybe_sent or failing_since is not None)
                self._log.redis_ok()
                return
            except RedisError as e:
                self._log.redis_failed(e)
                now = time.monotonic()
                if failing_since is None:
                    failing_since = now
                    self._log.line(f"report on {tasks_text(reports)} failed ({e}); retrying")
                ttl = self._options.heartbeat_ttl_ms / 1000
                if self._stop.is_set() and now - failing_since >= ttl:
                    break
            time.sleep(backoff.next())
        self._log.line(
            f"gave up reporting on {tasks_text(reports)}; they stay in {self._processing} "
            "until the dispatcher takes them back"
        )
