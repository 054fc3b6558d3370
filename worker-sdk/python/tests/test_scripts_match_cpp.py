"""Each Lua script the Python SDK ships is the text the C++ side runs: the constant in
common/src/scripts.cpp, or common/lua/<name>.lua should the scripts move there."""

import re
import unittest
from pathlib import Path

from rowpump.protocol import scripts

ROOT = Path(__file__).resolve().parents[3]
CPP_NAMES = {"complete": "kCompleteScript", "take": "kTakeScript", "leave": "kLeaveScript",
             "give_back": "kGiveBackScript", "beat": "kBeatScript"}


def cpp_text(name: str) -> str:
    lua = ROOT / "common" / "lua" / f"{name}.lua"
    if lua.exists():
        return lua.read_text("utf-8")
    source = (ROOT / "common" / "src" / "scripts.cpp").read_text("utf-8")
    match = re.search(
        r"const\s+char\s*\*\s*const\s+" + CPP_NAMES[name] + r'\s*=\s*R"lua\((.*?)\)lua";',
        source, re.S)
    if match is None:
        raise AssertionError(f"{CPP_NAMES[name]} is neither in common/lua/{name}.lua "
                             "nor a raw string in common/src/scripts.cpp")
    # The raw string starts on the line after R"lua( : that first newline is layout.
    return match.group(1).removeprefix("\n")


class ScriptsMatchCpp(unittest.TestCase):
    def test_every_script_is_the_cpp_text(self):
        self.assertEqual(sorted(scripts.SCRIPT_NAMES), sorted(CPP_NAMES))
        for name in scripts.SCRIPT_NAMES:
            with self.subTest(script=name):
                self.assertEqual(scripts.Script.load(name).body, cpp_text(name))

    def test_sha_is_of_the_body(self):
        import hashlib
        self.assertEqual(scripts.COMPLETE.sha,
                         hashlib.sha1(scripts.COMPLETE.body.encode()).hexdigest())


if __name__ == "__main__":
    unittest.main()
