"""rowpump worker SDK for Python: take tasks from a rowpump queue in Redis, run a handler,
report the outcome. See README.md beside this package.

    import rowpump

    def handle(task: rowpump.Task) -> rowpump.Outcome:
        return rowpump.ok({"status": "1"})

    rowpump.Worker("user_block_check", threads=8).run(handle)
"""

from .async_worker import AsyncWorker
from .errors import ConnectionError, Error
from .nudge import Nudger, nudge
from .outcome import Outcome, fail, ok, retry
from .protocol.protocol_version import PROTOCOL_VERSION
from .redis_address import RedisAddress
from .task import Task
from .worker import Worker

__version__ = "0.3.0"

__all__ = [
    "PROTOCOL_VERSION",
    "AsyncWorker",
    "ConnectionError",
    "Error",
    "Nudger",
    "Outcome",
    "RedisAddress",
    "Task",
    "Worker",
    "fail",
    "nudge",
    "ok",
    "retry",
]
