#pragma once

// Every Lua script of the protocol, one file each in common/lua/ (compiled in by
// cmake/EmbedLua.cmake), whose header says its KEYS, ARGV and reply. Workers in other languages
// run the same files: docs/protocol.md and tests/integration/redis_cli_worker.sh quote
// complete.lua, and tests/unit/test_scripts.cpp keeps those copies in step.

#include "rowpump/common/redis/script.hpp"

namespace rowpump::protocol {

// Run by workers.
extern const redis::Script kCompleteScript;  // complete.lua: report outcomes
extern const redis::Script kTakeScript;      // take.lua: take several tasks without blocking
extern const redis::Script kLeaveScript;     // leave.lua: sign off after a clean stop
extern const redis::Script kGiveBackScript;  // give_back.lua: after a failover, give tasks back
extern const redis::Script kBeatScript;      // beat.lua: the heartbeat of one incarnation

// Run by the dispatcher.
extern const redis::Script kLeadScript;       // lead.lua: take or renew the leader lock
extern const redis::Script kResignScript;     // resign.lua: give the leader lock up
extern const redis::Script kPushScript;       // push.lua: push ready messages, within the window
extern const redis::Script kTakeDoneScript;   // take_done.lua: read reports, bounded in bytes
extern const redis::Script kAckDoneScript;    // ack_done.lua: trim and count applied reports
extern const redis::Script kReapScript;       // reap.lua: take back a dead worker's tasks
extern const redis::Script kHeldScript;       // held.lua: which tasks Redis still holds
extern const redis::Script kKeyLimitsScript;  // key_limits.lua: per-key limits, bounded
// With shards (several MySQL servers, one leader each).
extern const redis::Script kRouteDoneScript;   // route_done.lua: reports to their shards
extern const redis::Script kReapToDoneScript;  // reap_to_done.lua: reap.lua, as reports

}  // namespace rowpump::protocol
