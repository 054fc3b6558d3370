"""Running a handler, with or without a deadline.

Without a deadline the handler runs on the serving thread. With one it runs on a helper
thread that the serving thread keeps for the next task; past the deadline the task is
reported as a retry with reason ``timeout``, ``task.cancelled`` is set, and the serving
thread goes on with a new helper: the stuck one finishes in the background (Python cannot
kill a thread), and whatever it returns then is discarded, so a task is reported once."""

from __future__ import annotations

import queue
import threading
from typing import Callable, List, Optional

from .worker_log import WorkerLog, log_text
from ..outcome import Outcome, retry
from ..task import Task

Handler = Callable[[Task], Outcome]

TIMEOUT_FIELD = "timeout_ms"
"""A ready message field that sets that task's deadline, in milliseconds."""


def call_handler(handler: Handler, task: Task) -> Outcome:
    """The handler's outcome; an exception becomes a retry that carries its text."""
    try:
        outcome = handler(task)
    except Exception as e:
        return retry(str(e) or type(e).__name__)
    if not isinstance(outcome, Outcome):
        return retry(f"the handler returned {type(outcome).__name__}, not a rowpump Outcome")
    return outcome


def task_deadline_ms(task: Task, default_ms: Optional[int], log: WorkerLog) -> Optional[int]:
    """The task's ``timeout_ms`` field if it has a valid one, else the worker's timeout."""
    text = task.fields.get(TIMEOUT_FIELD)
    if text is None:
        return default_ms
    if text.isascii() and text.isdigit() and 0 < int(text) <= 2**31:
        return int(text)
    log.line(f"task '{log_text(task.id)}': ignored {TIMEOUT_FIELD}={log_text(text)} "
             "(not a positive number of milliseconds)")
    return default_ms


class _Helper:
    """A thread that runs one job after another until told to finish."""

    def __init__(self) -> None:
        self.jobs: "queue.SimpleQueue[Optional[Callable[[], None]]]" = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="rowpump-handler", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            job()

    def finish(self) -> None:
        self.jobs.put(None)


class HandlerRunner:
    """One per serving thread."""

    def __init__(self) -> None:
        self._helper: Optional[_Helper] = None

    def run(self, handler: Handler, task: Task, deadline_ms: Optional[int]) -> Outcome:
        if deadline_ms is None:
            return call_handler(handler, task)
        if self._helper is None:
            self._helper = _Helper()
        result: List[Outcome] = []
        done = threading.Event()

        def job() -> None:
            result.append(call_handler(handler, task))
            done.set()

        self._helper.jobs.put(job)
        if done.wait(deadline_ms / 1000):
            return result[0]
        task.cancelled.set()
        self._helper.finish()  # it ends once the handler returns, if ever
        self._helper = None
        return retry("timeout")

    def close(self) -> None:
        if self._helper is not None:
            self._helper.finish()
            self._helper = None
