"""How many tasks a serving thread takes in its next round trip when ``batch`` is 0
(adaptive, the default): worker-sdk/src/adaptive_batch.hpp, the same rule.

Taking k tasks at once saves k - 1 round trips, but the last of them waits in this thread's
hand while the handler runs on the others. k grows (doubling) only while the ready list had
as many tasks as were asked for, falls to what it had when it had fewer, and never exceeds
round trip / handler time; a handler as slow as a round trip brings k back to 1 at once."""

from __future__ import annotations

DEFAULT_LIMIT = 16


class AdaptiveBatch:
    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._limit = max(1, limit)
        self._next = 1
        self._per_task = -1.0  # seconds; < 0: not measured yet
        self._round_trip = 0.0  # seconds, a moving average

    def next(self) -> int:
        """Tasks to take in the next round trip."""
        return self._next

    def _allowed(self) -> int:
        if self._per_task < 0 or self._round_trip == 0:
            return 1
        if self._per_task >= self._round_trip:
            return 1
        fits = self._limit if self._per_task == 0 else int(self._round_trip / self._per_task)
        return max(1, min(fits, self._limit))

    def handled(self, tasks: int, handling: float) -> None:
        """The handler ran on ``tasks`` tasks and took ``handling`` seconds for all."""
        if tasks <= 0:
            return
        self._per_task = handling / tasks
        self._next = min(self._next, self._allowed())

    def fetched(self, asked: int, got: int, round_trip: float) -> None:
        """A round trip that asked for ``asked`` tasks lasted ``round_trip`` and brought ``got``."""
        if self._round_trip == 0:
            self._round_trip = round_trip
        else:
            self._round_trip = (3 * self._round_trip + round_trip) / 4
        wanted = 2 * asked if got >= asked else max(got, 1)
        self._next = min(wanted, self._allowed())
