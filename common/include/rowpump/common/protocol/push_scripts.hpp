#pragma once

// The script through which the dispatcher pushes ready messages. A queue with a `rate` keeps
// its push window in Redis (Keys::window): every push is checked against it and recorded in
// it atomically, on the Redis server's clock, so the limit holds whichever dispatcher
// pushes, across restarts and takeovers.

namespace rowpump::protocol {

// Pushes the ready messages if the caller holds the leader lock (leader_scripts.hpp), the
// window has room for all of them (else none) and, with a backlog limit, so has the ready list
// (with shards, several dispatchers push to one ready list), records the push in the window,
// counts the rows in the stats hash and renews the lock. With no messages it only reads the
// window. Returns three integers as strings: 1 if pushed (or nothing to push), 0 if the window
// or the ready list was full, -1 if the caller does not hold the lock; the rows the window
// takes now; the µs until it takes one more (0: now).
//
// The window list holds one entry "<server time in µs>:<rows>" per push, oldest first,
// stamped when the push has landed; an entry leaves it `period` later. Times are the Redis
// server's: if its clock is set back, pushes wait for the step too (the limit stays strict).
//   KEYS[1] ready list, KEYS[2] window list, KEYS[3] stats hash, KEYS[4] leader key;
//   ARGV[1] rate count (0: no limit), ARGV[2] rate period in µs, ARGV[3] stats field,
//   ARGV[4] caller's id, ARGV[5] leader lock expiry in ms, ARGV[6] most ready messages the
//   ready list may hold after the push (0: not checked here), ARGV[7...] ready messages
extern const char* const kPushScript;

}  // namespace rowpump::protocol
