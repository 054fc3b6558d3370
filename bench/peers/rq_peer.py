#!/usr/bin/python3
"""RQ (python3-rq, Debian) on the benchmark's Redis: JOBS no-op jobs enqueued with
enqueue_many, 1,000 a pipeline, then PROCESSES worker processes, timed until no job is queued
or started. RQ runs one job at a time per process; SimpleWorker runs it in the worker process
(RQ's default Worker forks a child for every job).

  rq_peer.py run JOBS PROCESSES LOGGING OUT_DIR    enqueue, measure, print the result line
  rq_peer.py work LOGGING OUT_DIR                  one worker process

LOGGING: on (RQ's default, INFO: a line when a job starts and when it succeeds) or off
(WARNING). Prints "result jobs= left= seconds= workers_cpu_s= mysql_cpu_s= redis_cpu_s=" for
bench/scripts/peers.sh; each worker writes the ids it ran to OUT_DIR/ran-PID.txt.
Run with Debian's python3 (python3-rq, python3-redis).
"""

import os
import signal
import subprocess
import sys
import time

from redis import Redis
from rq import Queue, SimpleWorker
from rq.registry import StartedJobRegistry

import rq_job

QUEUE = "peers"
LIMIT_S = 900
CLOCK_TICKS = 100  # USER_HZ on Linux


def env(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f"rq_peer.py: {name} is not set (ROWPUMP_*: from scripts/servers.sh)")
    return value


def redis():
    return Redis(host=env("ROWPUMP_REDIS_HOST"), port=int(env("ROWPUMP_REDIS_PORT")))


def cpu_seconds(pid):
    """utime + stime of every thread of the process, from procfs."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(") ", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    except (FileNotFoundError, ProcessLookupError):
        return 0.0


def server_cpu():
    return cpu_seconds(env("ROWPUMP_MYSQL_PID")), cpu_seconds(env("ROWPUMP_REDIS_PID"))


def run(jobs, processes, logging, out_dir):
    connection = redis()
    queue = Queue(QUEUE, connection=connection)
    for first in range(1, jobs + 1, 1000):
        with connection.pipeline() as pipe:
            queue.enqueue_many(
                [Queue.prepare_data("rq_job.noop", (i,), result_ttl=500)
                 for i in range(first, min(first + 1000, jobs + 1))],
                pipeline=pipe)
            pipe.execute()
    started_jobs = StartedJobRegistry(QUEUE, connection=connection)

    def left():
        return queue.count + started_jobs.count

    mysql_before, redis_before = server_cpu()
    started = time.monotonic()
    workers = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "work", logging,
                                 out_dir]) for _ in range(processes)]
    remaining = jobs
    while True:
        remaining = left()
        if (remaining == 0 or time.monotonic() - started > LIMIT_S
                or all(w.poll() is not None for w in workers)):
            break
        time.sleep(0.02)
    seconds = time.monotonic() - started
    mysql_after, redis_after = server_cpu()
    workers_cpu = sum(cpu_seconds(w.pid) for w in workers)
    print(f"result jobs={jobs} left={remaining} seconds={seconds:.3f} "
          f"workers_cpu_s={workers_cpu:.2f} mysql_cpu_s={mysql_after - mysql_before:.2f} "
          f"redis_cpu_s={redis_after - redis_before:.2f}", flush=True)
    for w in workers:
        w.send_signal(signal.SIGTERM)  # RQ's warm shutdown: the job at hand, then exit
    for w in workers:
        w.wait()


def work(logging, out_dir):
    worker = SimpleWorker([Queue(QUEUE, connection=redis())], connection=redis())
    try:
        worker.work(logging_level="INFO" if logging == "on" else "WARNING")
    finally:
        with open(os.path.join(out_dir, f"ran-{os.getpid()}.txt"), "w") as f:
            f.write("".join(f"{i}\n" for i in rq_job.RAN))


def main():
    args = sys.argv[1:]
    if len(args) == 5 and args[0] == "run":
        run(int(args[1]), int(args[2]), args[3], args[4])
    elif len(args) == 3 and args[0] == "work":
        work(args[1], args[2])
    else:
        sys.exit("usage: rq_peer.py run JOBS PROCESSES LOGGING OUT_DIR | work LOGGING OUT_DIR")


if __name__ == "__main__":
    main()
