"""The pure parts of a worker's incarnation (rowpump/details/incarnation.py): the beat's
arguments, its reply, and what a starting worker makes of another process's heartbeat."""

import unittest

from rowpump.details import incarnation
from rowpump.protocol.keys import Keys


class Incarnation(unittest.TestCase):
    def test_each_is_new_and_hex(self):
        a, b = incarnation.new_incarnation(), incarnation.new_incarnation()
        self.assertNotEqual(a, b)
        self.assertRegex(a, r"^[0-9a-f]{16}$")

    def test_beat_args_carry_the_incarnation_and_on_the_first_beat_the_retry(self):
        args = incarnation.beat_args("w-1", "host=h", 9000, "00ff", first=False)
        self.assertEqual(args, ["w-1", "host=h;incarnation=00ff", "9000", "00ff"])
        first = incarnation.beat_args("w-1", "host=h", 9000, "00ff", first=True)
        self.assertEqual(first[-1],
                         " retry reason=worker%20w-1%20restarted%20before%20reporting%20it delay=0ms")

    def test_beat_keys(self):
        keys = Keys.of("users")
        self.assertEqual(incarnation.beat_keys(keys, "w"),
                         [keys.heartbeat("w"), keys.workers, keys.processing("w"), keys.done])

    def test_reply(self):
        self.assertIsNone(incarnation.beat_reply(0))
        self.assertIsNone(incarnation.beat_reply(3))
        self.assertEqual(incarnation.left_tasks(3), 3)
        self.assertEqual(incarnation.beat_reply([b"incarnation=ab"]), "incarnation=ab")
        self.assertEqual(incarnation.beat_reply(["x"]), "x")
        self.assertEqual(incarnation.left_tasks([b"x"]), 0)

    def test_renewed_or_not(self):
        self.assertIsNone(incarnation.renewed("v", 900, "v", 800))
        self.assertEqual(incarnation.renewed("v", 900, "v", 3000), "it renewed its heartbeat")
        self.assertEqual(incarnation.renewed("v", 900, "w", 800), "it renewed its heartbeat")
        self.assertEqual(incarnation.renewed("v", -1, "v", -1), "its heartbeat has no TTL")

    def test_errors_name_the_worker_id_and_escape_the_value(self):
        e = incarnation.in_use("pod-0", "rowpump:{q}:heartbeat:pod-0", "a\nb", "it renewed its heartbeat")
        self.assertIn("worker id 'pod-0' is in use by another live process", str(e))
        self.assertNotIn("\n", str(e))
        self.assertIn("worker id 'pod-0' was taken over",
                      incarnation.taken_over("pod-0", "k", "v"))


if __name__ == "__main__":
    unittest.main()
