"""The protocol version rule, and that the SDK speaks the version the C++ side defines."""

import re
import unittest
from pathlib import Path

from rowpump.protocol.protocol_version import PROTOCOL_VERSION, protocol_mismatch

ROOT = Path(__file__).resolve().parents[3]


class ProtocolVersion(unittest.TestCase):
    def test_equals_the_cpp_constant(self):
        header = (ROOT / "common/include/rowpump/common/protocol/protocol_version.hpp").read_text()
        match = re.search(r"kProtocolVersion\s*=\s*(\d+)", header)
        self.assertIsNotNone(match)
        self.assertEqual(PROTOCOL_VERSION, int(match.group(1)))

    def test_own_version_or_none_is_served(self):
        self.assertEqual(protocol_mismatch(str(PROTOCOL_VERSION)), "")
        self.assertEqual(protocol_mismatch(None), "")

    def test_another_or_unreadable_version_is_refused(self):
        self.assertIn("protocol version 999, this worker protocol version 1",
                      protocol_mismatch("999"))
        self.assertIn("no task was taken", protocol_mismatch("999"))
        self.assertIn("unreadable protocol version 'x\\\\n'", protocol_mismatch("x\\n"))
        self.assertNotEqual(protocol_mismatch(""), "")


if __name__ == "__main__":
    unittest.main()
