"""The success values the queue declares (``values`` in ``rowpump:{Q}:meta``), and the done
message an outcome becomes (worker-sdk/src/outcome_check.cpp)."""

from __future__ import annotations

import threading
from typing import List, Optional, Sequence

from .messages import MAX_MESSAGE_BYTES, clip_reason, format_done
from ..errors import Error
from ..outcome import Outcome, retry
from ..task import Task


def parse_values(csv: str) -> List[str]:
    """The names in a ``values`` meta field: comma-separated, blanks around names ignored."""
    return [name.strip(" ") for name in csv.split(",") if name.strip(" ")]


def _joined(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def value_problem(outcome: Outcome, declared: Sequence[str]) -> str:
    """"" if the outcome's values fit the declared placeholders exactly, else what is wrong."""
    for name in outcome.values:
        if name not in declared:
            return f"undeclared value '{name}' (queue declares: {_joined(declared)})"
    if outcome.verb != "ok":
        return ""
    for name in declared:
        if name not in outcome.values:
            return (
                f"value '{name}' is missing (on_success uses :{name}; "
                f"queue declares: {_joined(declared)})"
            )
    return ""


class DeclaredValues:
    """The queue's declared value names, updated from its meta at each heartbeat."""

    def __init__(self, queue: str) -> None:
        self._queue = queue
        self._lock = threading.Lock()
        self._names: List[str] = []

    def update(self, csv: str) -> None:
        names = parse_values(csv)
        with self._lock:
            self._names = names

    def problem(self, outcome: Outcome) -> str:
        if outcome.verb != "ok":
            return ""
        with self._lock:
            names = list(self._names)
        problem = value_problem(outcome, names)
        return f"queue '{self._queue}': {problem}" if problem else ""


def done_message(task: Task, outcome: Outcome, handler_ms: Optional[int] = None) -> str:
    """The done message reporting ``outcome`` (with ``ms=<handler_ms>`` when given); raises
    Error if it is too long to send."""
    reason = clip_reason(outcome.reason) if outcome.verb != "ok" else ""
    text = format_done(task, outcome.verb, outcome.values.items(), reason, outcome.delay_ms,
                       handler_ms=handler_ms)
    size = len(text.encode("utf-8", "surrogateescape"))
    if size > MAX_MESSAGE_BYTES:
        raise Error(
            f"the outcome of task '{task.id}' is {size} bytes long once encoded; "
            f"at most {MAX_MESSAGE_BYTES} fit in a done message"
        )
    return text


def checked_done_message(task: Task, outcome: Outcome, declared: DeclaredValues,
                         handler_seconds: Optional[float] = None) -> str:
    """The done message for ``outcome``, or, if the queue cannot take it, a retry naming
    the problem, so a task is never silently lost. ``handler_seconds``: how long the handler
    ran, reported as ``ms=``."""
    handler_ms = None if handler_seconds is None else int(handler_seconds * 1000)
    problem = declared.problem(outcome)
    if not problem:
        try:
            return done_message(task, outcome, handler_ms)
        except Error as e:
            problem = str(e)
    return done_message(task, retry(problem), handler_ms)
