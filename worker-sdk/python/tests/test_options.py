"""Worker options, Redis addresses and handler deadlines, checked without Redis."""

import unittest

import rowpump
from rowpump.details.deadline import HandlerRunner, call_handler, task_deadline_ms
from rowpump.details.worker_log import WorkerLog
from rowpump.protocol.messages import parse_ready
from rowpump.redis_address import RedisAddress, parse_endpoint

TOKEN = "7F3A9C01D2E4B5A6-1-2A"


class Options(unittest.TestCase):
    def test_bad_options_are_named(self):
        cases = [
            (dict(queue=""), "queue is required"),
            (dict(queue="a b"), "queue 'a b' must be"),
            (dict(queue="q", worker_id="w/1"), "worker_id 'w/1' must be"),
            (dict(queue="q", threads=0), "threads must be between 1 and 1024"),
            (dict(queue="q", batch=1001), "batch must be 0 (adaptive)"),
            (dict(queue="q", heartbeat_ttl=0.1), "heartbeat_ttl must be at least"),
            (dict(queue="q", fetch_timeout=0), "fetch_timeout must be positive"),
            (dict(queue="q", timeout=0), "timeout must be positive"),
            (dict(queue="q", redis=RedisAddress(sentinels=["h:1"])),
             "sentinels and master go together"),
            (dict(queue="q", redis=RedisAddress(sentinels=["h:1"], master="m", cluster=["h:2"])),
             "sentinels and cluster exclude each other"),
            (dict(queue="q", redis=RedisAddress(cluster=["nonsense"])), "is not host:port"),
        ]
        for kwargs, problem in cases:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(rowpump.Error) as caught:
                    rowpump.Worker(**kwargs)
                self.assertIn(problem, str(caught.exception))

    def test_default_worker_id(self):
        worker = rowpump.Worker("q")
        self.assertRegex(worker.worker_id, r"^[A-Za-z0-9_-]{1,40}-\d+-[0-9a-f]{6}$")

    def test_endpoints(self):
        self.assertEqual(parse_endpoint("10.0.0.1:26379"), ("10.0.0.1", 26379))
        self.assertEqual(parse_endpoint("[::1]:7000"), ("::1", 7000))
        for bad in ("host", "host:", ":1", "h:0", "h:70000", "h:x"):
            with self.assertRaises(ValueError, msg=bad):
                parse_endpoint(bad)


class Deadlines(unittest.TestCase):
    def setUp(self):
        self.lines = []
        self.log = WorkerLog(self.lines.append, "w")

    def test_task_field_overrides_the_worker_timeout(self):
        self.assertEqual(task_deadline_ms(parse_ready(f"1:{TOKEN}"), 5000, self.log), 5000)
        self.assertIsNone(task_deadline_ms(parse_ready(f"1:{TOKEN}"), None, self.log))
        self.assertEqual(
            task_deadline_ms(parse_ready(f"1:{TOKEN} timeout_ms=250"), 5000, self.log), 250)

    def test_a_bad_timeout_field_is_logged_and_ignored(self):
        for value in ("0", "-1", "abc", "1.5", ""):
            task = parse_ready(f"1:{TOKEN} timeout_ms={value}")
            self.assertEqual(task_deadline_ms(task, 5000, self.log), 5000, value)
        self.assertEqual(len(self.lines), 5)
        self.assertIn("ignored timeout_ms=", self.lines[0])

    def test_an_exception_is_a_retry_with_its_text(self):
        def handler(task):
            raise ValueError("upstream down")
        self.assertEqual(call_handler(handler, parse_ready(f"1:{TOKEN}")),
                         rowpump.retry("upstream down"))

    def test_a_handler_past_its_deadline_is_a_timeout_retry_and_is_cancelled(self):
        runner = HandlerRunner()
        task = parse_ready(f"1:{TOKEN}")
        released = []

        def hang(t):
            t.cancelled.wait(30)
            released.append(True)
            return rowpump.ok()

        self.assertEqual(runner.run(hang, task, 50), rowpump.retry("timeout"))
        self.assertTrue(task.cancelled.is_set())
        # The next task runs on a fresh helper thread while the old one finishes.
        self.assertEqual(runner.run(lambda t: rowpump.ok({"a": "1"}), parse_ready(f"2:{TOKEN}"),
                                    5000), rowpump.ok({"a": "1"}))
        runner.close()

    def test_a_handler_within_its_deadline_returns_its_outcome(self):
        runner = HandlerRunner()
        self.assertEqual(runner.run(lambda t: rowpump.fail("no"), parse_ready(f"1:{TOKEN}"), 5000),
                         rowpump.fail("no"))
        runner.close()


if __name__ == "__main__":
    unittest.main()
