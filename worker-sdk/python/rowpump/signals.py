"""SIGTERM and SIGINT as a request to drain: the first one stops the worker (tasks in hand
finish and are reported, then the heartbeat is deleted); the handlers that were there before
come back at once, so a second signal acts as it did before (by default it ends the process)."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextmanager
def stop_on_signals(stop: Callable[[], None]) -> Iterator[bool]:
    """While inside, SIGTERM and SIGINT call ``stop()``. Only on the main thread (the only
    one Python lets handle signals); elsewhere it does nothing and yields False."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    previous: Dict[int, Any] = {s: signal.getsignal(s) for s in STOP_SIGNALS}

    def restore() -> None:
        for number, handler in previous.items():
            signal.signal(number, handler)

    def on_signal(number: int, frame: Any) -> None:
        restore()
        stop()

    for number in STOP_SIGNALS:
        signal.signal(number, on_signal)
    try:
        yield True
    finally:
        restore()
