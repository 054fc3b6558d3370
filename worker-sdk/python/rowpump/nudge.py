"""Waking the dispatcher after committing a due row (docs/protocol.md "Nudging the dispatcher")."""

from __future__ import annotations

from redis.exceptions import RedisError

from .details.route import Route
from .errors import ConnectionError, Error
from .protocol.keys import Keys, is_valid_name
from .redis_address import RedisAddress, as_address


class Nudger:
    """Keeps one connection and sends one ``PUBLISH rowpump:{queue}:nudge 1`` per ``nudge()``."""

    def __init__(self, redis: "RedisAddress | str | None", queue: str) -> None:
        if not is_valid_name(queue):
            raise Error(f"nudge: queue '{queue}' must be 1 to 64 characters from [A-Za-z0-9_.-]")
        self._channel = Keys.of(queue).nudge
        self._route = Route(as_address(redis), self._channel, 5.0)

    def nudge(self) -> None:
        try:
            self._route.run(lambda c: c.publish(self._channel, "1"))
        except RedisError as e:
            raise ConnectionError(f"nudge: {e}") from e

    def close(self) -> None:
        self._route.close()


def nudge(redis: "RedisAddress | str | None", queue: str) -> None:
    """Wakes the leading dispatcher of ``queue`` to claim at once. Send it after the commit.
    A hint only: a lost nudge means the next poll finds the row."""
    nudger = Nudger(redis, queue)
    try:
        nudger.nudge()
    finally:
        nudger.close()
