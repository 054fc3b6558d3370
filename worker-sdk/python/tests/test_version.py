"""The package's version is the project's: project(VERSION) in the top-level CMakeLists.txt."""

import re
import unittest
from pathlib import Path

import rowpump

ROOT = Path(__file__).resolve().parents[3]


class Version(unittest.TestCase):
    def test_version_is_the_projects(self):
        cmake = (ROOT / "CMakeLists.txt").read_text("utf-8")
        match = re.search(r"project\(rowpump VERSION ([0-9.]+)", cmake)
        self.assertIsNotNone(match)
        self.assertEqual(rowpump.__version__, match.group(1))


if __name__ == "__main__":
    unittest.main()
