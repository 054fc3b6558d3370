#!/usr/bin/env python3
"""The chaos run's worker on the Python SDK (worker-sdk/python): the same flags and the same
ledger as rowpump_chaos_worker (chaos/worker.cpp), so that the fleet mixes languages.

  --redis-port P --queue Q --worker-id ID --ledger FILE
  --threads N --batch B --heartbeat-ttl-ms MS

Each handler run appends `<queue> <id> <token> <pid> <unix µs> <outcome>` to the ledger with
one write() on an O_APPEND descriptor (a line written survives kill -9), then returns the
planned outcome (planned_outcome() in chaos/workload.hpp: `once` rows whose id is 250 mod 500
fail, those 7 mod 20 retry on their first attempt); a success reports claim=<token>. The
`keyed` queue's handler runs for KEYED_HANDLER_S (kKeyedHandlerMs) and then appends
`<queue> <id> <token> <pid> <unix µs> end`.
SIGTERM/SIGINT: finish the tasks in hand, exit 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import rowpump

KEYED_HANDLER_S = 0.1  # kKeyedHandlerMs in chaos/workload.hpp


def planned_outcome(queue: str, task_id: str, attempt: int) -> str:
    if queue != "once":
        return "ok"
    n = int(task_id)
    if n % 500 == 250:
        return "fail"
    if n % 20 == 7 and attempt == 1:
        return "retry"
    return "ok"


def main() -> int:
    p = argparse.ArgumentParser(description="rowpump chaos worker (Python SDK)")
    p.add_argument("--redis-port", type=int, required=True)
    p.add_argument("--queue", required=True)
    p.add_argument("--worker-id", required=True)
    p.add_argument("--ledger", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--heartbeat-ttl-ms", type=int, default=3000)
    a = p.parse_args()
    fd = os.open(a.ledger, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    pid = os.getpid()
    worker = rowpump.Worker(
        a.queue, rowpump.RedisAddress(port=a.redis_port), threads=a.threads, batch=a.batch,
        worker_id=a.worker_id, heartbeat_ttl=a.heartbeat_ttl_ms / 1000)

    def note(task: rowpump.Task, word: str) -> None:
        line = f"{a.queue} {task.id} {task.token} {pid} {time.time_ns() // 1000} {word}\n"
        data = line.encode()
        if os.write(fd, data) != len(data):
            raise OSError("cannot write the ledger")

    def handle(task: rowpump.Task) -> rowpump.Outcome:
        outcome = planned_outcome(a.queue, task.id, task.attempt)
        note(task, outcome)
        if a.queue == "keyed":
            time.sleep(KEYED_HANDLER_S)
            note(task, "end")
        if outcome == "fail":
            return rowpump.fail("chaos: fails on purpose")
        if outcome == "retry":
            return rowpump.retry("chaos: retries on purpose", 0.2)
        return rowpump.ok({"claim": task.token})

    worker.run(handle)  # SIGTERM/SIGINT: drains and returns
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except rowpump.Error as e:
        print(f"chaos_worker.py: {e}", file=sys.stderr)
        sys.exit(1)
