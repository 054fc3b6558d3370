#pragma once

// Per-key figures of a queue with group_by (docs/fairness.md), published by its leader so that
// `rowpump status`, the metrics and the dashboard of every dispatcher show the same ones, and
// the per-key limits the operator set, read back as they are:
//
// rowpump:{q}:key_gauges, a hash written with rowpump:{q}:gauges every due_count.interval and
// expiring with it; only the top kTopKeys keys, and every other key together:
//   key:<value>   one of the top keys: "pushed=N recent=N passed_over=N[ in_flight=N]"
//   null          the NULL key, the same way (when it is one of the top keys)
//   other         every other key together, the same way
//   leader        the id of the dispatcher that counted
//   at_ms         when, in Unix milliseconds
//
// rowpump:{q}:key_limits, a hash the operator edits (`rowpump limit`): field = the key's value
// as text, value = space-separated name=value pairs (rate=N/period, concurrency=N, weight=N).
// Read here raw and bounded (read_key_limits), for showing.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/common/redis/redis.hpp"

namespace rowpump::protocol {

// What the leader knows of one key (or of every key outside the top ones together).
struct KeyFigure {
    std::optional<std::string> key;  // nullopt: the NULL key (and the `other` entry)
    std::int64_t pushed = 0;         // tasks pushed to the ready list since this leader counts them
    std::int64_t recent = 0;         // of which in the last interval (between two publications)
    std::int64_t passed_over = 0;    // claims that passed the key over at its limit
    std::optional<std::int64_t> in_flight;  // counted with concurrency_per_key only
};

struct KeyGauges {
    std::vector<KeyFigure> top;  // most in flight first, then most recent, then most pushed
    KeyFigure other;
    std::string leader;
    std::int64_t at_ms = 0;
};

inline constexpr std::size_t kTopKeys = 20;
// A key's value as Redis may hold it: MySQL keys are up to 255 characters (1,020 bytes in
// utf8mb4); longer fields are cut to this many bytes when read.
inline constexpr std::size_t kKeyBytes = 1024;

// The order of KeyGauges::top.
bool ranks_before(const KeyFigure& a, const KeyFigure& b);

// The field/value pairs to HSET, and the other way: at most kTopKeys keys are kept (the
// first by rank), fields that do not parse are dropped; nullopt when there is none.
std::vector<std::string> key_gauge_fields(const KeyGauges& gauges);
std::optional<KeyGauges> parse_key_gauges(const std::vector<std::string>& fields);

// One entry of rowpump:{q}:key_limits, as written: the key's text and its limits' text, each cut
// to a bound (kKeyBytes, kLimitsBytes).
struct KeyLimitEntry {
    std::string key;
    std::string limits;
};
struct KeyLimits {
    std::vector<KeyLimitEntry> shown;  // the first kKeyLimitsShown HSCAN returns, in key order
    std::int64_t total = 0;            // how many the hash holds
};
inline constexpr std::size_t kKeyLimitsShown = 1000;
inline constexpr std::size_t kLimitsBytes = 256;

// A hash's field/value pairs, at most `max_fields` of them (HSCAN, not HGETALL: a hash anyone can
// write may be large), with how many it holds (HLEN).
struct BoundedHash {
    std::vector<std::pair<std::string, std::string>> fields;
    std::int64_t total = 0;
};
BoundedHash read_hash_bounded(redis::Connection& redis, const std::string& key,
                              std::size_t max_fields);

KeyLimits read_key_limits(redis::Connection& redis, const std::string& queue);
std::optional<KeyGauges> read_key_gauges(redis::Connection& redis, const std::string& queue);

}  // namespace rowpump::protocol
