"""A Redis user that may run loaded scripts only: when Redis lost them (NOSCRIPT) and EVAL is
refused (NOPERM), a script call raises ScriptsNotLoaded, a Redis error the worker retries, with
a message that says what it waits for."""

import unittest

from redis.exceptions import NoPermissionError, NoScriptError, RedisError

from rowpump.protocol import scripts


class Client:
    def __init__(self, eval_error):
        self.calls = []
        self.eval_error = eval_error

    def execute_command(self, verb, *args):
        self.calls.append(verb)
        if verb == "EVALSHA":
            raise NoScriptError("No matching script. Please use EVAL.")
        if self.eval_error:
            raise self.eval_error
        return 1


class ScriptsNotLoadedTest(unittest.TestCase):
    def test_eval_refused_is_a_retried_redis_error_that_says_why(self):
        client = Client(NoPermissionError("this user has no permissions to run the 'eval' command"))
        with self.assertRaises(scripts.ScriptsNotLoaded) as raised:
            scripts.COMPLETE.call(client, ["p", "d"], ["m", "m ok"])
        self.assertIsInstance(raised.exception, RedisError)
        self.assertIn("may not run EVAL; waiting for a dispatcher to load", str(raised.exception))
        self.assertIn("complete.lua", str(raised.exception))
        self.assertEqual(client.calls, ["EVALSHA", "EVAL"])

    def test_eval_allowed_still_runs_the_script(self):
        client = Client(None)
        self.assertEqual(scripts.TAKE.call(client, ["r", "p"], ["1"]), 1)
        self.assertEqual(client.calls, ["EVALSHA", "EVAL"])


if __name__ == "__main__":
    unittest.main()
