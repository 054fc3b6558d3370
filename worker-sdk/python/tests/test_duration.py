"""Durations: what the SDK is given (seconds, timedelta) and what it sends."""

import unittest
from datetime import timedelta

from rowpump import retry
from rowpump.protocol.duration import format_duration, parse_duration, to_millis


class Durations(unittest.TestCase):
    def test_format_uses_the_largest_unit_that_divides(self):
        cases = {0: "0ms", 1: "1ms", 1500: "1500ms", 2000: "2s", 90_000: "90s",
                 120_000: "2m", 3_600_000: "1h", 5_400_000: "90m"}
        for ms, text in cases.items():
            self.assertEqual(format_duration(ms), text)

    def test_parse(self):
        self.assertEqual(parse_duration("1m30s"), 90_000)
        self.assertEqual(parse_duration("250ms"), 250)
        self.assertEqual(parse_duration("2h"), 7_200_000)
        for bad in ("", "5", "s", "1x", "1mm", "-1s", "1.5s"):
            self.assertIsNone(parse_duration(bad), bad)

    def test_format_then_parse_round_trips(self):
        for ms in (0, 1, 999, 1000, 61_000, 3_600_000, 86_400_000):
            self.assertEqual(parse_duration(format_duration(ms)), ms)

    def test_seconds_and_timedeltas_to_millis(self):
        self.assertEqual(to_millis(30), 30_000)
        self.assertEqual(to_millis(0.25), 250)
        self.assertEqual(to_millis(timedelta(minutes=2)), 120_000)
        self.assertEqual(to_millis(0.0001), 1)  # a positive delay never becomes 0
        with self.assertRaises(TypeError):
            to_millis("5s")  # type: ignore[arg-type]
        with self.assertRaises(ValueError):
            to_millis(float("nan"))

    def test_retry_delay(self):
        self.assertEqual(retry("x", timedelta(seconds=90)).delay_ms, 90_000)
        self.assertEqual(retry("x", 1.5).delay_ms, 1500)
        self.assertEqual(retry("x", -3).delay_ms, 0)
        self.assertIsNone(retry("x").delay_ms)


if __name__ == "__main__":
    unittest.main()
