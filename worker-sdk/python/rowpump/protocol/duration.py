"""Durations on the wire: ``<n>h``, ``<n>m``, ``<n>s`` or ``<n>ms`` (common/src/duration.cpp)."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import Optional, Union

Seconds = Union[float, int, timedelta]
"""A duration given to the SDK: seconds (int or float) or a ``timedelta``."""

_PART = re.compile(r"([0-9]+)(ms|s|m|h)")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
_MAX_MS = (2**63 - 1) // 1000


def to_millis(duration: Seconds) -> int:
    """Whole milliseconds, rounded up so that a positive duration never becomes 0."""
    if isinstance(duration, timedelta):
        seconds = duration.total_seconds()
    elif isinstance(duration, (int, float)) and not isinstance(duration, bool):
        seconds = float(duration)
    else:
        raise TypeError(f"a duration is seconds (int, float) or a timedelta, not {duration!r}")
    if math.isnan(seconds) or math.isinf(seconds):
        raise ValueError(f"a duration must be finite, not {duration!r}")
    return int(math.ceil(round(seconds * 1000, 6)))


def format_duration(ms: int) -> str:
    """The wire form of ``ms`` milliseconds, in the largest unit that divides it."""
    if ms != 0 and ms % 3_600_000 == 0:
        return f"{ms // 3_600_000}h"
    if ms != 0 and ms % 60_000 == 0:
        return f"{ms // 60_000}m"
    if ms != 0 and ms % 1000 == 0:
        return f"{ms // 1000}s"
    return f"{ms}ms"


def parse_duration(text: str) -> Optional[int]:
    """Milliseconds from a wire duration such as ``1m30s``; ``None`` if it is not one."""
    if not text:
        return None
    total, pos = 0, 0
    while pos < len(text):
        match = _PART.match(text, pos)
        if match is None:
            return None
        # "1mm" or "5sx": the unit must end where the next number starts.
        end = match.end()
        if end < len(text) and text[end] not in "0123456789":
            return None
        total += int(match.group(1)) * _UNIT_MS[match.group(2)]
        if total > _MAX_MS:
            return None
        pos = end
    return total
