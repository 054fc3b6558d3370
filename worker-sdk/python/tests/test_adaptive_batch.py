"""The adaptive batch rule (the same cases as the C++ adaptive_batch tests would hold)."""

import unittest

from rowpump.details.adaptive_batch import AdaptiveBatch


class AdaptiveBatchRule(unittest.TestCase):
    def test_starts_at_one(self):
        self.assertEqual(AdaptiveBatch().next(), 1)

    def test_doubles_while_full_and_fast(self):
        b = AdaptiveBatch()
        for expected in (2, 4, 8, 16, 16):
            b.handled(b.next(), 0.0)
            b.fetched(b.next(), b.next(), 0.001)
            self.assertEqual(b.next(), expected)

    def test_a_short_take_falls_to_what_came(self):
        b = AdaptiveBatch()
        for _ in range(3):
            b.handled(b.next(), 0.0)
            b.fetched(b.next(), b.next(), 0.001)
        b.fetched(8, 3, 0.001)
        self.assertEqual(b.next(), 3)
        b.fetched(3, 0, 0.001)
        self.assertEqual(b.next(), 1)

    def test_slow_handlers_bring_it_back_to_one(self):
        b = AdaptiveBatch()
        for _ in range(3):
            b.handled(b.next(), 0.0)
            b.fetched(b.next(), b.next(), 0.001)
        b.handled(1, 0.002)  # slower than a round trip
        self.assertEqual(b.next(), 1)

    def test_never_more_than_a_round_trip_of_handling(self):
        b = AdaptiveBatch()
        b.handled(1, 0.00025)
        for _ in range(6):
            b.fetched(b.next(), b.next(), 0.001)
        self.assertEqual(b.next(), 4)


if __name__ == "__main__":
    unittest.main()
