"""The tasks this worker's threads hold, and the ones its processing list holds that no
thread does (worker-sdk/src/held_tasks.cpp).

A fetch that Redis executed but whose reply never arrived (the connection broke in between)
leaves its tasks in the processing list, unknown to every thread. While this worker sends
heartbeats nobody else gives them back, so it does: after a lost reply it lists the
processing list, and a second or more later lists it again, and moves each message found
both times that no thread holds back to the ready list (with the complete script, so each
moves only if it is still there)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any, Callable, Optional, Set

from .worker_log import WorkerLog
from ..protocol import scripts

ORPHAN_AGE = 1.0
"""Seconds: a reply in flight reaches its thread well within this."""


class HeldTasks:
    def __init__(self, processing: str, ready: str, log: WorkerLog) -> None:
        self._processing = processing
        self._ready = ready
        self._log = log
        self._held: "Counter[str]" = Counter()
        self._held_lock = threading.Lock()
        self._reply_lost = False
        self._look_lock = threading.Lock()
        self._suspects: Optional[Set[str]] = None
        self._suspects_at = 0.0

    def hold(self, message: str) -> None:
        with self._held_lock:
            self._held[message] += 1

    def release(self, message: str) -> None:
        with self._held_lock:
            if self._held[message] <= 1:
                self._held.pop(message, None)
            else:
                self._held[message] -= 1

    def fetch_reply_lost(self) -> None:
        """A fetch failed after it may have reached Redis."""
        self._reply_lost = True

    def _unheld(self, client: Any) -> Set[str]:
        listed = client.lrange(self._processing, 0, -1)
        with self._held_lock:
            return {m for m in listed if m not in self._held}

    def give_back_orphans(self, run: Callable[[Callable[[Any], Any]], Any]) -> None:
        """Costs nothing unless a reply was lost. ``run(command)`` runs ``command(client)``
        on the queue's node. Raises redis errors."""
        if not self._reply_lost and self._suspects is None:
            return
        if not self._look_lock.acquire(blocking=False):
            return
        try:
            now = time.monotonic()
            if self._suspects is None:
                self._reply_lost = False  # a reply lost from now on starts a look of its own
                try:
                    suspects = run(self._unheld)
                except BaseException:
                    self._reply_lost = True
                    raise
                self._suspects = suspects or None
                self._suspects_at = now
                return
            if now - self._suspects_at < ORPHAN_AGE:
                return
            suspects = self._suspects
            args = [m for m in sorted(run(self._unheld)) if m in suspects for _ in (0, 1)]
            moved = 0
            if args:
                moved = int(
                    run(lambda c: scripts.COMPLETE.call(c, [self._processing, self._ready], args))
                )
            self._suspects = None  # only now: a look that failed is tried again
            if moved:
                self._log.line(
                    f"gave back {moved} task(s) that a fetch had moved into {self._processing} "
                    "but whose reply was lost"
                )
        finally:
            self._look_lock.release()
