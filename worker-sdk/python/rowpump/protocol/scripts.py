"""The Lua scripts a worker runs, kept as package data in ``rowpump/protocol/lua/`` (the same text as
``common/lua/``; a unit test checks that). Each is sent with EVALSHA first and
with EVAL when Redis does not have it (NOSCRIPT), like the C++ SDK's ``Script``. A Redis user
that may run loaded scripts only (docs/operations.md, "Least privilege": no EVAL) gets ``ScriptsNotLoaded``
then, a Redis error the worker retries with backoff: the dispatcher loads every script again
once it finds Redis lost them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from typing import Any, Sequence

from redis.exceptions import NoPermissionError, NoScriptError, ResponseError

SCRIPT_NAMES = ("complete", "take", "leave", "give_back", "beat")
"""The scripts a worker uses, by file name (``rowpump/protocol/lua/<name>.lua``)."""


class ScriptsNotLoaded(ResponseError):  # type: ignore[misc]  # redis-py: no type information
    """EVALSHA found no script (Redis restarted or failed over) and EVAL was refused (NOPERM)."""


@dataclass(frozen=True)
class Script:
    name: str
    body: str
    sha: str

    @staticmethod
    def load(name: str) -> "Script":
        body = resources.files(__package__).joinpath("lua", name + ".lua").read_text("utf-8")
        return Script(name, body, hashlib.sha1(body.encode("utf-8")).hexdigest())

    def call(self, client: Any, keys: Sequence[str], args: Sequence[str]) -> Any:
        """Runs the script on ``client`` (a redis-py client): EVALSHA, else EVAL."""
        try:
            return client.execute_command("EVALSHA", self.sha, len(keys), *keys, *args)
        except NoScriptError:
            pass
        try:
            return client.execute_command("EVAL", self.body, len(keys), *keys, *args)
        except NoPermissionError as e:
            raise self.not_loaded(e) from e

    async def call_async(self, client: Any, keys: Sequence[str], args: Sequence[str]) -> Any:
        """The same on a ``redis.asyncio`` client."""
        try:
            return await client.execute_command("EVALSHA", self.sha, len(keys), *keys, *args)
        except NoScriptError:
            pass
        try:
            return await client.execute_command("EVAL", self.body, len(keys), *keys, *args)
        except NoPermissionError as e:
            raise self.not_loaded(e) from e

    def not_loaded(self, refused: Exception) -> ScriptsNotLoaded:
        return ScriptsNotLoaded(
            f"Redis does not have script {self.name}.lua ({self.sha}) loaded (lost after a restart"
            " or failover) and this Redis user may not run EVAL; waiting for a dispatcher to load"
            f" the scripts again ({refused})"
        )


COMPLETE = Script.load("complete")
"""Removes each ready message from a list and pushes its done message, if it was there."""
TAKE = Script.load("take")
"""Moves up to ARGV[1] messages from the ready list to the processing list."""
LEAVE = Script.load("leave")
"""Deletes the heartbeat; unlists the worker if its processing list is empty."""
GIVE_BACK = Script.load("give_back")
"""Moves everything in the processing list back to the head of the ready list."""
BEAT = Script.load("beat")
"""The heartbeat of one incarnation of a worker id (refused while another holds it)."""
