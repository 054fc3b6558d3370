import socket
import unittest

import rowpump
from rowpump.protocol.messages import percent_encode
from rowpump.protocol.worker_info import format_worker_info


class WorkerInfo(unittest.TestCase):
    def test_the_heartbeat_value_says_who_the_worker_is(self):
        host = socket.gethostname()[:64]
        self.assertEqual(format_worker_info(12, 10000),
                         f"host={percent_encode(host)};lang=python;version={rowpump.__version__};"
                         "done=12;ttl=10000")


if __name__ == "__main__":
    unittest.main()
