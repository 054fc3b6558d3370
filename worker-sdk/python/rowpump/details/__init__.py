"""The parts of a worker (internal): its membership of the queue (heartbeat), fetching,
reporting, the serving threads, deadlines, and the route to the queue's Redis node."""
