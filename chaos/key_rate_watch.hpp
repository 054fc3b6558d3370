#pragma once

// Checks the keyed queue's `rate_per_key` from Redis's own record of its pushes, as RateWatch
// checks the paced queue's `rate`. The push script keeps each key's pushes of the last period
// in the hash rowpump:{keyed}:key_rate: field "=<key's value>" ("null" for NULL), value one
// "<until µs>:<rows>" entry per push of that key, `until` the Redis server time the push landed
// plus the period (common/lua/push.lua). An entry stays there until then, so reading the hash
// every 100 ms sees every push of a period longer than that. A push's time is its `until` less
// the period. The rule is judge_rate's, for each key alone (judge_rate_per_key, key_limits.hpp).
//
// The script merges a key's oldest two entries once it has more than 16; that cannot happen
// while the key's limit is 16 rows or fewer (each entry carries at least one row), so a watched
// queue's rate_per_key must keep under it, or merged entries would be read as new pushes.

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "rate_watch.hpp"
#include "rowpump/redis_address.hpp"

namespace rowpump::chaos {

// Each key's pushes, by the key's value as the verdict names it ("(null)" for NULL).
using KeyPushes = std::map<std::string, std::set<WindowPush>>;

// Files the entries of one key_rate field read from the data `epoch` into `pushes`; `period`:
// the key's rate period. Entries of another form are skipped. Returns how many were skipped.
std::int64_t add_key_rate_field(KeyPushes& pushes, int epoch, const std::string& field,
                                const std::string& value, std::chrono::microseconds period);

class KeyRateWatch {
public:
    // Reads the key_rate hash of `queue`, whose keys all have the rate period `period`, until
    // stop(); `epoch` tells which Redis data it reads.
    KeyRateWatch(RedisAddress redis, std::string queue, std::chrono::microseconds period,
                 const std::atomic<int>& epoch);
    ~KeyRateWatch();
    KeyRateWatch(const KeyRateWatch&) = delete;
    KeyRateWatch& operator=(const KeyRateWatch&) = delete;

    void stop();
    KeyPushes pushes() const;
    std::int64_t malformed() const;  // entries of another form than the script writes

private:
    void run();

    RedisAddress redis_;
    std::string key_;
    std::chrono::microseconds period_;
    const std::atomic<int>& epoch_;
    mutable std::mutex mutex_;
    KeyPushes pushes_;
    std::int64_t malformed_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace rowpump::chaos
