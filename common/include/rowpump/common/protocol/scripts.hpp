#pragma once

// Every Lua script of the protocol. Workers in other languages run the same text (README.md,
// "Protocol", and tests/integration/redis_cli_worker.sh quote kCompleteScript; a unit test
// keeps those copies in step).

namespace rowpump::protocol {

// Run by workers to report outcomes: for each (ready message, done message) pair, removes
// the ready message from the worker's processing list and, only if it was still there, pushes
// the done message. Returns how many reports were accepted; a report is refused when the
// task had already been taken back from this worker.
//   KEYS[1] processing list, KEYS[2] done list; ARGV: ready message, done message, ...
extern const char* const kCompleteScript;

// Run by workers to take up to ARGV[1] tasks at once without blocking: LMOVE from the
// ready list to the processing list, oldest first. Returns the messages it moved.
//   KEYS[1] ready list, KEYS[2] processing list; ARGV[1] how many at most
extern const char* const kTakeScript;

// Run by a worker signing off after a clean stop: the heartbeat goes at once; the worker
// leaves the workers set only with nothing left in hand, otherwise it stays listed, so the
// dispatcher (seeing no heartbeat) takes the leftovers back right away. Returns how many
// tasks were left.
//   KEYS[1] heartbeat, KEYS[2] processing list, KEYS[3] workers set; ARGV[1] worker id
extern const char* const kLeaveScript;

// Run by a worker's heartbeat when the queue moved to another node (a Sentinel or Cluster
// failover, a resharding): gives every task in its processing list back to the head of the
// ready list. A report acknowledged by the old master and lost in the failover leaves its task
// in the processing list although the worker is done with it; given back, it runs again (its
// first outcome was never applied, or the settled token makes it count once). Tasks still in
// hand run twice; their first reports are refused (no longer in the processing list). Returns
// how many tasks it gave back.
//   KEYS[1] processing list, KEYS[2] ready list
extern const char* const kGiveBackScript;

// Run by the dispatcher to take back the tasks of a worker whose heartbeat expired.
// Atomic with respect to the worker's own reports. Returns the ready messages it took.
//   KEYS[1] heartbeat, KEYS[2] processing list, KEYS[3] workers set; ARGV[1] worker id
extern const char* const kReapScript;

// Run by the dispatcher before it writes off a claim whose lease is running out: which of the
// given ready messages are still held in Redis, that is waiting in the ready list, in the
// processing list of a listed worker (a worker whose heartbeat lapsed is listed until the
// dispatcher takes its tasks back), or reported in the done list and not applied yet. One
// atomic look, so a task moving from one list to the next is never missed. Reads the
// processing lists by name (ARGV[1] .. worker id): they share the queue's hash tag, so the
// same Redis Cluster slot. Returns the messages it found; given none, every message held.
//   KEYS[1] ready list, KEYS[2] done list, KEYS[3] workers set, KEYS[4] (a shard's runner
//   only) the shard's done list; ARGV[1] processing key prefix, ARGV[2..] ready messages
extern const char* const kHeldScript;

}  // namespace rowpump::protocol
