#pragma once

// Per-key limits with group_by (docs/fairness.md): the queue's rate_per_key and
// concurrency_per_key, a weight of 1, and overrides for named keys that the operator edits at
// run time in the Redis hash Keys::key_limits (`rowpump limit set`). A field of that hash is
// the key's value as text (as the group_by column's value reads); its value is space-separated
// `name=value` pairs, any of `rate=N/period`, `concurrency=N`, `weight=N`. Pure logic: the
// leader reads the hash (RowClaim), the CLI writes it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/claim.hpp"

namespace rowpump {

constexpr std::size_t kMaxLimitKeyBytes = 255;           // a key named in key_limits
constexpr std::size_t kMaxLimitValueBytes = 256;         // a value of key_limits
constexpr std::size_t kMaxKeyLimitOverrides = 10000;     // fields of key_limits
constexpr std::int64_t kMaxKeyLimitNumber = 1000000000;  // rate count, concurrency
constexpr std::int64_t kMaxKeyWeight = 1000;

// One key's override: what it names replaces the queue's setting for that key.
struct KeyLimit {
    std::optional<Rate> rate;
    std::optional<std::int64_t> concurrency;
    std::optional<std::int64_t> weight;
};

// "rate=100/1s concurrency=5 weight=3" (any subset, at least one, each once). nullopt with
// `error` set (naming the part that is wrong) for anything else.
std::optional<KeyLimit> parse_key_limit(std::string_view text, std::string& error);
// The same form back, names in the order rate, concurrency, weight.
std::string format_key_limit(const KeyLimit& limit);
// A key named in key_limits: 1 to kMaxLimitKeyBytes bytes. "" when fine, else why not.
std::string check_limit_key(std::string_view key);

// A key's field in Keys::key_rate: "=" and the value, "null" for NULL, so no two keys share one.
std::string key_rate_field(const GroupKey& key);

// With rate_per_key (group_by): one key of a push, its rate and its rows in the push (0: only
// read its window). `field`: key_rate_field(key) (loop/key_limits.hpp).
struct KeyRate {
    std::string field;
    Rate rate;
    std::int64_t rows = 0;
};
// A key's push window, on the Redis server's clock.
struct KeyWindow {
    std::int64_t rows_left = 0;         // rows its window takes now
    std::chrono::microseconds wait{0};  // until it takes one more row; 0: now
};

class KeyLimits {
public:
    explicit KeyLimits(const QueueConfig& queue);

    // Replaces the overrides with the fields of key_limits as read (field, value); returns one
    // message per field refused (a key too long, a bad value: that key keeps the queue's
    // settings), its key and value escaped for a log. More than kMaxKeyLimitOverrides fields:
    // keeps the overrides it had and says so.
    std::vector<std::string> load(const std::vector<std::pair<std::string, std::string>>& fields);

    std::optional<Rate> rate(const GroupKey& key) const;
    std::int64_t concurrency(const GroupKey& key) const;  // 0: no limit
    std::int64_t weight(const GroupKey& key) const;       // 1 by default
    // Whether any key has a rate / a concurrency limit (the queue's or an override).
    bool any_rate() const { return queue_rate_.has_value() || rate_overrides_ > 0; }
    bool any_concurrency() const { return queue_concurrency_ > 0 || concurrency_overrides_ > 0; }
    std::size_t overrides() const { return overrides_.size(); }

private:
    const KeyLimit* find(const GroupKey& key) const;

    std::optional<Rate> queue_rate_;
    std::int64_t queue_concurrency_ = 0;
    bool shards_ = false;  // concurrency overrides refused: each shard's leader would count alone
    std::map<std::string, KeyLimit, std::less<>> overrides_;
    std::size_t rate_overrides_ = 0, concurrency_overrides_ = 0;
};

}  // namespace rowpump
