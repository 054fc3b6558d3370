#pragma once

// What the loop does with a batch of done entries (of the done list, or of tasks taken back).

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rowpump/dispatcher/loop/outcomes.hpp"
#include "rowpump/dispatcher/redis/redis_side.hpp"

namespace rowpump {

// Applies the accepted entries; when MySQL refuses a value in the batch, applies them one at a
// time and marks the refused ones with MySQL's error. Marks `locked` those whose row another
// transaction held (Outcomes::apply), and clears it on the others.
AppliedCounts apply_isolating(Outcomes& store, std::vector<DoneEntry>& entries);

// How many entries were refused, and the first one's error with its message, for a log line.
std::pair<std::size_t, std::string> refusals(const std::vector<DoneEntry>& entries);

// The log lines of a batch acknowledged in Redis: its refused entries (`refused` as refusals()
// gives it, moved to the `bad_list`), outcomes applied before, stale and dead ones, and those
// put back because their row was locked (at debug level).
void log_acknowledged(const std::string& label, const AppliedCounts& counts,
                      const std::pair<std::size_t, std::string>& refused, std::int64_t locked,
                      const std::string& bad_list);

// The ids of the entries marked `locked`, for LockedRowWatch.
std::vector<std::string> locked_ids(const std::vector<DoneEntry>& entries);

bool any_accepted(const std::vector<DoneEntry>& entries);

}  // namespace rowpump
