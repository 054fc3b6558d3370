"""What a handler returns: ``ok(values)``, ``retry(reason, delay)`` or ``fail(reason)``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional

from .protocol.duration import Seconds, to_millis


@dataclass(frozen=True)
class Outcome:
    """The result of one task. Build it with ``ok``, ``retry`` or ``fail``.

    ``verb`` is the done message's verb: ``ok``, ``retry`` or ``fail``.
    """

    verb: str
    values: Dict[str, str] = field(default_factory=dict)
    reason: str = ""
    delay_ms: Optional[int] = None


def ok(values: Optional[Mapping[str, str]] = None) -> Outcome:
    """Done. ``values`` fill the queue's ``on_success`` placeholders
    (``:status`` <- ``{"status": "1"}``), exactly those the queue declares."""
    checked: Dict[str, str] = {}
    for name, value in (values or {}).items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise TypeError(f"success values are str -> str, not {name!r}: {value!r}")
        checked[name] = value
    return Outcome("ok", values=checked)


def retry(reason: str = "", delay: Optional[Seconds] = None) -> Outcome:
    """Try again later: after ``delay`` (seconds or a ``timedelta``) if given, else after
    the queue's backoff. The dispatcher caps the delay at the queue's ``retry.max_delay``."""
    delay_ms = None if delay is None else max(0, to_millis(delay))
    return Outcome("retry", reason=str(reason), delay_ms=delay_ms)


def fail(reason: str = "") -> Outcome:
    """Give up: the row is dead, listed by ``rowpump dead``, revived by ``rowpump retry``."""
    return Outcome("fail", reason=str(reason))
