#pragma once

// The leader lock of a queue: Redis key Keys::leader holds the leading dispatcher's id and
// expires unless that dispatcher renews it, so a leader that stops making progress (killed,
// frozen, a stuck host) loses it within the expiry, measured on the Redis server's clock.
// Whatever a leader writes that another one would also write (pushes, done-list trims) is
// fenced: it checks the key in the same script, so a stale leader's write is refused
// atomically (the push script, push_scripts.hpp, does the same).

namespace rowpump::protocol {

// Takes the lock when it is free, renews it when ARGV[1] holds it. Returns the holder's id
// after the call (ARGV[1] when the caller leads) and '1' when the caller took a free lock
// ('0' when it renewed its own, or another holds it): a leader that takes a free lock lost
// it at some point, and another may have led meanwhile.
//   KEYS[1] leader key; ARGV[1] caller's id, ARGV[2] expiry in ms
extern const char* const kLeadScript;

// Gives the lock up if ARGV[1] holds it, so a stand-by need not wait for the expiry.
//   KEYS[1] leader key; ARGV[1] caller's id
extern const char* const kResignScript;

// Acknowledges a batch of done messages if ARGV[1] leads: removes the first ARGV[2] from the
// done list, moves the ARGV[3] refused ones that follow in ARGV to the bad list, and adds the
// (field, amount) pairs after them to the stats hash, all at once, so a batch leaves the list
// exactly when it is counted. Returns 1, or 0 (not the leader, nothing changed).
//   KEYS[1] leader key, KEYS[2] done list, KEYS[3] bad list, KEYS[4] stats hash;
//   ARGV[1] caller's id, ARGV[2] count, ARGV[3] n refused, n messages, field, amount, ...
extern const char* const kAckDoneScript;

}  // namespace rowpump::protocol
