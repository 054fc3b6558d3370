"""The no-op job of the RQ peer (rq_peer.py): records the id it ran, nothing else. Its worker
process writes the ids out when it exits (ran-PID.txt), so jobs that ran twice show up."""

RAN = []


def noop(job_id: int) -> None:
    RAN.append(job_id)
