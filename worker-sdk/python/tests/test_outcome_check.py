"""Success values against the queue's declared placeholders (outcome_check.cpp)."""

import unittest

from rowpump import Error, fail, ok, retry
from rowpump.protocol.messages import MAX_MESSAGE_BYTES, parse_ready
from rowpump.protocol.outcome_check import (
    DeclaredValues,
    checked_done_message,
    done_message,
    parse_values,
    value_problem,
)

TASK = parse_ready("42:7F3A9C01D2E4B5A6-1-2A")


class ValueProblems(unittest.TestCase):
    def test_meta_values_are_comma_separated_names(self):
        self.assertEqual(parse_values("status, note ,,"), ["status", "note"])
        self.assertEqual(parse_values(""), [])

    def test_exactly_the_declared_values_pass(self):
        self.assertEqual(value_problem(ok({"status": "1"}), ["status"]), "")
        self.assertEqual(value_problem(ok(), []), "")

    def test_an_undeclared_value_is_named(self):
        self.assertEqual(
            value_problem(ok({"status": "1", "bogus": "x"}), ["status"]),
            "undeclared value 'bogus' (queue declares: status)",
        )
        self.assertEqual(value_problem(ok({"x": "1"}), []),
                         "undeclared value 'x' (queue declares: none)")

    def test_a_missing_value_is_named(self):
        self.assertEqual(
            value_problem(ok({"status": "1"}), ["status", "note"]),
            "value 'note' is missing (on_success uses :note; queue declares: status, note)",
        )

    def test_retry_and_fail_carry_no_values(self):
        self.assertEqual(value_problem(retry("x"), ["status"]), "")
        self.assertEqual(value_problem(fail("x"), ["status"]), "")


class CheckedDoneMessages(unittest.TestCase):
    def setUp(self):
        self.declared = DeclaredValues("users")
        self.declared.update("status")

    def test_a_fitting_success_is_sent_as_is(self):
        self.assertEqual(checked_done_message(TASK, ok({"status": "2"}), self.declared),
                         "42:7F3A9C01D2E4B5A6-1-2A ok status=2")

    def test_a_success_the_queue_cannot_take_becomes_a_retry_naming_the_problem(self):
        text = checked_done_message(TASK, ok({"stat": "2"}), self.declared)
        self.assertEqual(
            text,
            "42:7F3A9C01D2E4B5A6-1-2A retry reason=queue%20%27users%27%3A%20undeclared%20value"
            "%20%27stat%27%20%28queue%20declares%3A%20status%29",
        )

    def test_the_handler_duration_goes_into_ms(self):
        self.assertEqual(checked_done_message(TASK, ok({"status": "2"}), self.declared, 0.0125),
                         "42:7F3A9C01D2E4B5A6-1-2A ok status=2 ms=12")
        text = checked_done_message(TASK, ok({"stat": "2"}), self.declared, 2.0)
        self.assertTrue(text.endswith(" ms=2000"), text)

    def test_the_declared_values_follow_the_meta(self):
        self.declared.update("status,note")
        self.assertIn(" retry ", checked_done_message(TASK, ok({"status": "2"}), self.declared))

    def test_a_done_message_too_long_to_send(self):
        huge = ok({"status": "x" * MAX_MESSAGE_BYTES})
        with self.assertRaises(Error):
            done_message(TASK, huge)
        self.assertIn(" retry reason=the%20outcome%20of%20task%20%2742%27%20is%20",
                      checked_done_message(TASK, huge, self.declared))

    def test_values_must_be_strings(self):
        with self.assertRaises(TypeError):
            ok({"status": 1})  # type: ignore[dict-item]


if __name__ == "__main__":
    unittest.main()
