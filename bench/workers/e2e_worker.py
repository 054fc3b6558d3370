#!/usr/bin/python3
"""The end-to-end benchmark's worker on the Python SDK (worker-sdk/python): the flags of
bench/e2e_worker.cpp, mode noop only (reports ok with status=1, or sleeps --handler-ms first).

  e2e_worker.py --redis-host H --redis-port P [--queue bench] [--threads N] [--batch B]
                [--handler-ms MS] [--mode noop|async] [--time-limit S]

--mode async runs the AsyncWorker with --threads as its concurrency (one task per round
trip: it has no batch). SIGTERM or SIGINT: stop
fetching, finish the tasks in hand, exit 0. --time-limit is a backstop (a forgotten worker
stops by itself). Run with PYTHONPATH=worker-sdk/python and Debian's python3 (python3-redis).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
import time

import rowpump


def main() -> int:
    parser = argparse.ArgumentParser(description="rowpump benchmark worker (Python SDK)")
    parser.add_argument("--redis-host", default="127.0.0.1")
    parser.add_argument("--redis-port", type=int, required=True)
    parser.add_argument("--queue", default="bench")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=0)
    parser.add_argument("--handler-ms", type=int, default=0)
    parser.add_argument("--mode", choices=("noop", "async"), default="noop")
    parser.add_argument("--time-limit", type=int, default=600)
    args = parser.parse_args()

    address = rowpump.RedisAddress(host=args.redis_host, port=args.redis_port)
    done = rowpump.ok({"status": "1"})
    pause = args.handler_ms / 1000

    if args.mode == "async":
        async def handle_async(task: rowpump.Task) -> rowpump.Outcome:
            if pause:
                await asyncio.sleep(pause)
            return done

        async def serve() -> None:
            worker = rowpump.AsyncWorker(args.queue, address, concurrency=args.threads)
            loop = asyncio.get_running_loop()
            loop.call_later(args.time_limit, worker.stop)
            await worker.run(handle_async)

        asyncio.run(serve())
        return 0

    def handle(task: rowpump.Task) -> rowpump.Outcome:
        if pause:
            time.sleep(pause)
        return done

    worker = rowpump.Worker(args.queue, address, threads=args.threads, batch=args.batch)
    timer = threading.Timer(args.time_limit, worker.stop)
    timer.daemon = True
    timer.start()
    worker.run(handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
