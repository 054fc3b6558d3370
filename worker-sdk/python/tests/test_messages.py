"""Ready and done messages (the wire protocol) without Redis."""

import unittest

from rowpump import fail, ok, retry
from rowpump.protocol.messages import (
    MalformedMessage,
    clip_reason,
    format_done,
    is_valid_token,
    parse_ready,
    percent_decode,
    percent_encode,
    ready_message,
)
from rowpump.protocol.outcome_check import done_message
from rowpump.task import Task

TOKEN = "7F3A9C01D2E4B5A6-1-2A"


class PercentEncoding(unittest.TestCase):
    def test_unreserved_bytes_stay(self):
        self.assertEqual(percent_encode("AZaz09-._~"), "AZaz09-._~")

    def test_other_bytes_become_upper_case_hex(self):
        self.assertEqual(percent_encode("a b:c=%"), "a%20b%3Ac%3D%25")
        self.assertEqual(percent_encode("é"), "%C3%A9")
        self.assertEqual(percent_encode(b"\x00\xff"), "%00%FF")

    def test_decode_round_trips(self):
        for raw in (b"", b"42", b"a b:c=%", "é".encode(), bytes(range(256))):
            self.assertEqual(percent_decode(percent_encode(raw)), raw)

    def test_decode_accepts_lower_case_hex(self):
        self.assertEqual(percent_decode("%c3%a9"), "é".encode())

    def test_decode_refuses_bad_escapes_and_separators(self):
        for text in ("%", "%4", "%G0", "a b", "a:b", "a=b", "abc%2"):
            self.assertIsNone(percent_decode(text), text)


class ReadyMessages(unittest.TestCase):
    def test_plain_message(self):
        task = parse_ready("42:" + TOKEN)
        self.assertEqual((task.id, task.token, task.attempt), ("42", TOKEN, 1))
        self.assertEqual(task.raw_id, b"42")
        self.assertEqual(task.fields, {})
        self.assertEqual(task.message, "42:" + TOKEN)

    def test_id_is_split_at_the_last_colon_and_decoded(self):
        task = parse_ready("a%3Ab%20c:7F3A9C01D2E4B5A6-12-2A")
        self.assertEqual(task.id, "a:b c")
        self.assertEqual(task.attempt, 12)

    def test_bytes_id_keeps_raw_bytes(self):
        task = parse_ready("%FF%00:" + TOKEN)
        self.assertEqual(task.raw_id, b"\xff\x00")
        self.assertEqual(task.id, "\ufffd\x00")

    def test_fields_after_the_token(self):
        task = parse_ready(f"7:{TOKEN} email=a%40b.c note=two%20words gone timeout_ms=500")
        self.assertEqual(
            task.fields,
            {"email": "a@b.c", "note": "two words", "gone": None, "timeout_ms": "500"},
        )
        self.assertEqual(task.id, "7")
        self.assertEqual(task.token, TOKEN)

    def test_non_utf8_field_bytes_become_replacement_characters(self):
        # A BLOB payload column's bytes are whatever the row holds: decoding never raises.
        task = parse_ready(f"7:{TOKEN} data=%00%FF%80%3A%25 name=Zo%C3%AB%20%E6%97%A5 cut=%E6%97")
        self.assertEqual(task.fields["data"], "\x00\ufffd\ufffd:%")
        self.assertEqual(task.fields["name"], "Zo\u00eb \u65e5")
        self.assertEqual(task.fields["cut"], "\ufffd")

    def test_empty_value_is_an_empty_string_not_null(self):
        self.assertEqual(parse_ready(f"7:{TOKEN} x=").fields, {"x": ""})

    def test_malformed_messages_name_the_problem(self):
        cases = {
            "garbage": "no ':'",
            ":" + TOKEN: "invalid id",
            "a%2:" + TOKEN: "invalid id",
            "1:7F3A9C01D2E4B5A6-0-2A": "invalid token",
            "1:7f3a9c01d2e4b5a6-1-2A": "invalid token",
            "1:7F3A9C01D2E4B5A6-1-": "invalid token",
            "1:7F3A9C01D2E4B5A6-1-2A-": "invalid token",
            f"1:{TOKEN}  x=1": "invalid field",
            f"1:{TOKEN} =1": "invalid field",
            f"1:{TOKEN} x=%ZZ": "invalid percent-encoding",
            f"1:{TOKEN} x=a:b": "invalid percent-encoding",
        }
        for message, problem in cases.items():
            with self.assertRaises(MalformedMessage, msg=message) as caught:
                parse_ready(message)
            self.assertIn(problem, str(caught.exception), message)

    def test_token_shape(self):
        self.assertTrue(is_valid_token(TOKEN))
        self.assertTrue(is_valid_token("0123456789ABCDEF-999999999-0"))
        self.assertFalse(is_valid_token("0123456789ABCDEF-1234567890-0"))  # attempt > 9 digits
        self.assertFalse(is_valid_token("0123456789ABCDEF-1-" + "A" * 200))

    def test_ready_message_of_a_hand_built_task(self):
        self.assertEqual(ready_message(Task(id="a b", token=TOKEN, attempt=1)), "a%20b:" + TOKEN)


class DoneMessages(unittest.TestCase):
    def setUp(self):
        self.task = parse_ready("42:" + TOKEN)

    def test_ok_with_values(self):
        self.assertEqual(done_message(self.task, ok({"status": "2"})), f"42:{TOKEN} ok status=2")

    def test_retry_with_reason_and_delay(self):
        self.assertEqual(
            done_message(self.task, retry("upstream down", 30)),
            f"42:{TOKEN} retry reason=upstream%20down delay=30s",
        )

    def test_fail(self):
        self.assertEqual(done_message(self.task, fail("gone")), f"42:{TOKEN} fail reason=gone")

    def test_extend(self):
        self.assertEqual(format_done(self.task, "extend", lease_ms=600_000),
                         f"42:{TOKEN} extend lease=10m")

    def test_the_done_message_names_the_task_without_its_fields(self):
        # The dispatcher reads "<id>:<token>" and the verb from the first two words; the
        # processing list keeps the ready message verbatim, fields and all.
        task = parse_ready(f"42:{TOKEN} a=1 b")
        self.assertEqual(done_message(task, ok()), f"42:{TOKEN} ok")
        self.assertEqual(ready_message(task), f"42:{TOKEN} a=1 b")

    def test_reason_is_clipped_to_1000_bytes_on_a_character_boundary(self):
        self.assertEqual(clip_reason("x" * 1000), "x" * 1000)
        clipped = clip_reason("é" * 600)  # 1200 bytes
        self.assertTrue(clipped.endswith("..."))
        self.assertLessEqual(len(clipped.encode()), 1000)
        self.assertEqual(clipped, "é" * 498 + "...")


if __name__ == "__main__":
    unittest.main()
