#pragma once

// Checks the `rate` of the paced queue from Redis's own record of its pushes. The push script
// keeps `<server time µs>:<rows>` in rowpump:{paced}:window for every push of the last period
// (an entry leaves only once it is a full period old); reading that list every 100 ms sees
// every push. The rule checked, the one docs/semantics.md states: for every push P, the rows of all
// pushes landed in [P, P + period) add up to at most the rate's N. Pushes on either side of a
// Redis restart that lost the data are not compared (docs/semantics.md names that limit).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "rowpump/redis_address.hpp"

namespace rowpump::chaos {

struct RateVerdict {
    std::int64_t pushes = 0;      // pushes seen
    std::int64_t rows = 0;        // rows they carried
    std::int64_t violations = 0;  // pushes whose window holds more than N rows
    std::int64_t worst = 0;       // the most rows found in one window
    std::int64_t full = 0;        // pushes whose window holds N rows or more: the limit reached
    std::vector<std::string> examples;  // the first few violations, one line each
};

// One push as the window list recorded it, and which Redis data it was read from.
struct WindowPush {
    int epoch = 0;
    std::int64_t micros = 0;  // Redis server time
    std::int64_t rows = 0;

    bool operator<(const WindowPush& o) const {
        return std::tie(epoch, micros, rows) < std::tie(o.epoch, o.micros, o.rows);
    }
};

// The rule above, for `limit` rows per `period`; `pushes` in the order of operator<.
RateVerdict judge_rate(const std::set<WindowPush>& pushes, std::int64_t limit,
                       std::chrono::microseconds period);

class RateWatch {
public:
    // Reads the window of `queue` until stop(); `epoch` tells which Redis data it reads.
    RateWatch(RedisAddress redis, std::string queue, const std::atomic<int>& epoch);
    ~RateWatch();
    RateWatch(const RateWatch&) = delete;
    RateWatch& operator=(const RateWatch&) = delete;

    void stop();
    RateVerdict verdict(std::int64_t limit, std::chrono::microseconds period) const;

private:
    void run();

    RedisAddress redis_;
    std::string key_;
    const std::atomic<int>& epoch_;
    mutable std::mutex mutex_;
    std::set<WindowPush> pushes_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace rowpump::chaos
