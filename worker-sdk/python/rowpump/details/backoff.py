"""Waiting out a Redis outage: 100 ms doubling to 2 s, like the C++ SDK."""

from __future__ import annotations


class Backoff:
    def __init__(self, first: float = 0.1, cap: float = 2.0) -> None:
        self._first = first
        self._cap = cap
        self._next = first

    def next(self) -> float:
        wait = self._next
        self._next = min(self._cap, self._next * 2)
        return wait

    def reset(self) -> None:
        self._next = self._first
