"""Lines about problems the worker survives: to ``log`` if given, else to stderr."""

from __future__ import annotations

import sys
import threading
from typing import Callable, Optional

LogSink = Callable[[str], None]


def log_text(text: str, max_chars: int = 200) -> str:
    """``text`` safe to show: control characters escaped, cut after ``max_chars``."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or 0x7F <= code < 0xA0 or 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code & 0xFF:02X}")
        else:
            out.append(ch)
        if len(out) >= max_chars:
            return "".join(out) + f"... ({len(text)} characters)"
    return "".join(out)


class WorkerLog:
    def __init__(self, sink: Optional[LogSink], worker_id: str) -> None:
        self._sink = sink
        self._worker_id = worker_id
        self._redis_down = False
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        try:
            if self._sink is not None:
                self._sink(text)
            else:
                sys.stderr.write(f"rowpump worker {self._worker_id}: {text}\n")
                sys.stderr.flush()
        except Exception:  # a failing logger must not take the worker down
            pass

    def redis_failed(self, error: BaseException) -> None:
        """Logs the first failure of an outage only."""
        with self._lock:
            first, self._redis_down = not self._redis_down, True
        if first:
            self.line(f"redis unavailable ({log_text(str(error) or type(error).__name__)}); retrying")

    def redis_ok(self) -> None:
        with self._lock:
            was_down, self._redis_down = self._redis_down, False
        if was_down:
            self.line("redis reachable again")
