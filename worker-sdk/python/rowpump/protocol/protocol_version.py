"""The protocol version (common/include/rowpump/common/protocol/protocol_version.hpp): the
ready and done messages, key names and scripts this SDK speaks, and the rule it applies to
the version a dispatcher publishes in the queue's meta hash (docs/protocol.md "Protocol version")."""

from __future__ import annotations

from typing import Optional

from ..details.worker_log import log_text

PROTOCOL_VERSION = 1
"""The version this SDK speaks; equal to ``kProtocolVersion`` (a unit test checks it)."""

UNPUBLISHED_VERSION = 1
"""What a dispatcher that publishes no ``protocol`` field speaks."""


def _parse(text: str) -> Optional[int]:
    if not text or len(text) > 9 or not all("0" <= c <= "9" for c in text):
        return None
    return int(text)


def protocol_mismatch(published: Optional[str], own: int = PROTOCOL_VERSION) -> str:
    """``""`` when a worker of version ``own`` may work for a dispatcher that published
    ``published`` (None: no field), else why not, in the C++ SDK's words."""
    theirs = UNPUBLISHED_VERSION if published is None else _parse(published)
    if theirs == own:
        return ""
    dispatcher = (f"protocol version {theirs}" if theirs is not None
                  else f"an unreadable protocol version '{log_text(published or '', 40)}'")
    return (f"the dispatcher speaks {dispatcher}, this worker protocol version {own}; run a "
            "worker and a dispatcher of the same protocol version (docs/upgrading.md); no task "
            "was taken")
