#pragma once

// The stats hash (rowpump:{q}:stats): counters the dispatcher keeps with HINCRBY and
// `rowpump status` reads. docs/protocol.md lists them.

#include <cstdint>
#include <map>
#include <string>

namespace rowpump::protocol {

inline constexpr const char* kStatDispatched = "dispatched";  // ready messages pushed
inline constexpr const char* kStatCompleted = "completed";    // ok reports applied
inline constexpr const char* kStatRetried = "retried";        // retry reports applied
inline constexpr const char* kStatDead = "dead";              // rows that went dead
inline constexpr const char* kStatStale = "stale";            // reports whose token had expired
inline constexpr const char* kStatBad = "bad";                // messages moved to the bad list
inline constexpr const char* kStatReaped = "reaped";          // tasks taken back from dead workers
inline constexpr const char* kStatRenewed = "renewed";  // leases renewed: the task was still held
// Outcomes found applied already (a dispatcher stopped after the commit, before acknowledging
// them): counted once as what they were, and here as well.
inline constexpr const char* kStatAgain = "again";

// Counter name -> value (or increment); a missing counter reads 0.
using Stats = std::map<std::string, std::int64_t>;
std::int64_t stat(const Stats& stats, const char* name);

}  // namespace rowpump::protocol
