#pragma once

// What dispatchers publish about a queue besides counters, so that `rowpump status`, the
// metrics and the dashboard of every dispatcher show the same numbers without counting again:
//
// rowpump:{q}:gauges, a hash written by the leader every due_count.interval, expiring after
// three intervals (a stale count is worse than none):
//   due          rows due and claimable, counted up to the cap
//   due_capped   1 when the count stopped at the cap ("more than <due>")
//   oldest_due_age_ms  age of the oldest due row (queues with due_since only)
//   leader       the id of the dispatcher that counted
//   at_ms        when, in Unix milliseconds
//
// rowpump:{q}:dispatchers, a hash of dispatcher id -> "<role> <Unix ms>" (role kRoleLeader or
// kRoleStandby), refreshed by each dispatcher every due_count.interval; readers ignore entries
// older than kDispatcherFresh and remove ones older than kDispatcherForgotten.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/common/duration.hpp"

namespace rowpump::protocol {

struct QueueGauges {
    std::int64_t due = 0;
    bool due_capped = false;
    std::optional<Millis> oldest_due_age;
    std::string leader;
    std::int64_t at_ms = 0;
};

// The field/value pairs to HSET, and the other way (absent or unreadable fields stay empty).
std::vector<std::string> gauge_fields(const QueueGauges& gauges);
std::optional<QueueGauges> parse_gauges(const std::vector<std::string>& fields);

inline constexpr Millis kDispatcherFresh{15000};
inline constexpr Millis kDispatcherForgotten{300000};

// A dispatcher's role in its entry.
inline constexpr const char* kRoleLeader = "leader";
inline constexpr const char* kRoleStandby = "standby";

struct DispatcherEntry {
    std::string id;    // "<host>:<pid>"
    std::string role;  // kRoleLeader or kRoleStandby
    std::int64_t at_ms = 0;
};
std::string format_dispatcher_entry(const std::string& role, std::int64_t at_ms);
// From HGETALL; entries that do not parse (an empty id, a role other than leader or standby,
// no time) are dropped.
std::vector<DispatcherEntry> parse_dispatchers(const std::vector<std::string>& fields);

// This process's id among dispatchers: "<host name>:<pid>".
std::string dispatcher_id();
std::int64_t unix_ms();

}  // namespace rowpump::protocol
