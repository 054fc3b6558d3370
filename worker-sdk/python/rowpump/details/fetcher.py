"""Taking tasks from the ready list into this worker's processing list
(worker-sdk/src/fetcher.cpp)."""

from __future__ import annotations

import threading
import time
from typing import Any, List, Optional

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .held_tasks import HeldTasks
from .options import Options
from .route import Route
from .worker_log import WorkerLog, log_text
from ..protocol import scripts
from ..protocol.keys import Keys
from ..protocol.messages import MalformedMessage, parse_ready
from ..task import Task


class Fetcher:
    def __init__(
        self,
        options: Options,
        keys: Keys,
        route: Route,
        held: HeldTasks,
        log: WorkerLog,
        stop: threading.Event,
    ) -> None:
        self._options = options
        self._keys = keys
        self._processing = keys.processing(options.worker_id)
        self._route = route
        self.held = held
        self._log = log
        self._stop = stop
        self._bad_lock = threading.Lock()
        self.bad_messages = 0

    def _lost_reply(self, command: Any) -> Any:
        """Runs ``command(client)``; a broken connection may have lost a reply whose tasks
        Redis moved all the same."""
        try:
            return self._route.run(command)
        except (RedisConnectionError, RedisTimeoutError):
            self.held.fetch_reply_lost()
            raise

    def fetch(self, timeout: float) -> Optional[Task]:
        """Waits up to ``timeout`` seconds for a task (in blocks no longer than the heartbeat
        allows); None when none came, or once stop was asked for. Raises redis errors."""
        deadline = time.monotonic() + timeout
        while True:
            self.held.give_back_orphans(self._route.run)
            left = deadline - time.monotonic()
            if left > 0:
                block = min(left, self._options.longest_block)
                message = self._lost_reply(
                    # LEFT RIGHT: oldest first, and the processing list keeps fetch order.
                    lambda c: c.blmove(self._keys.ready, self._processing, f"{block:.3f}",
                                       "LEFT", "RIGHT")
                )
                if message is None and block < left:
                    if self._stop.is_set():
                        return None
                    continue  # the next block
            else:
                message = self._lost_reply(
                    lambda c: c.lmove(self._keys.ready, self._processing, "LEFT", "RIGHT")
                )
            if message is None:
                return None
            task = self.accept(message)
            if task is not None:
                return task

    def take(self, count: int) -> List[str]:
        """Moves up to ``count`` messages at once (the take script; it does not block)."""
        self.held.give_back_orphans(self._route.run)
        return list(
            self._lost_reply(
                lambda c: scripts.TAKE.call(c, [self._keys.ready, self._processing], [str(count)])
            )
        )

    def accept(self, message: str) -> Optional[Task]:
        """A message now in our processing list: a task, or set aside as malformed."""
        try:
            task = parse_ready(message)
        except MalformedMessage as e:
            self._set_aside(message, str(e))
            return None
        self.held.hold(message)
        return task

    def accept_all(self, messages: List[str]) -> List[Task]:
        return [t for t in (self.accept(m) for m in messages) if t is not None]

    def _set_aside(self, message: str, error: str) -> None:
        # The complete script moves a message between lists atomically: reused for the bad list.
        self._route.run(
            lambda c: scripts.COMPLETE.call(c, [self._processing, self._keys.bad], [message, message])
        )
        with self._bad_lock:
            self.bad_messages += 1
        self._log.line(
            f"malformed ready message '{log_text(message)}' ({log_text(error)}) "
            f"moved to {self._keys.bad}"
        )
