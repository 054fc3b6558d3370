"""The Redis keys of a queue (common/src/keys.cpp): all share the hash tag ``{queue}``."""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def is_valid_name(name: str) -> bool:
    """Queue names and worker ids: 1 to 64 characters from ``[A-Za-z0-9_.-]``."""
    return _NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class Keys:
    """The keys of one queue, and the two of one worker on it."""

    queue: str
    prefix: str
    ready: str
    done: str
    bad: str
    workers: str
    meta: str
    nudge: str

    @staticmethod
    def of(queue: str) -> "Keys":
        prefix = "rowpump:{" + queue + "}:"
        return Keys(
            queue=queue,
            prefix=prefix,
            ready=prefix + "ready",
            done=prefix + "done",
            bad=prefix + "bad",
            workers=prefix + "workers",
            meta=prefix + "meta",
            nudge=prefix + "nudge",
        )

    def processing(self, worker_id: str) -> str:
        return self.prefix + "processing:" + worker_id

    def heartbeat(self, worker_id: str) -> str:
        return self.prefix + "heartbeat:" + worker_id
