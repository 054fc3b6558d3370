#pragma once

// Checks the `rate` of the paced queue from Redis's own record of its pushes. The push script
// keeps `<server time µs>:<rows>` in rowpump:{paced}:window for every push of the last period
// (an entry leaves only once it is a full period old); reading that list every 100 ms sees
// every push. The rule checked, the one README.md states: for every push P, the rows of all
// pushes landed in [P, P + period) add up to at most the rate's N. Pushes on either side of a
// Redis restart that lost the data are not compared (README.md names that limit).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "rowpump/redis_address.hpp"

namespace rowpump::chaos {

struct RateVerdict {
    std::int64_t pushes = 0;      // pushes seen
    std::int64_t rows = 0;        // rows they carried
    std::int64_t violations = 0;  // pushes whose window holds more than N rows
    std::int64_t worst = 0;       // the most rows found in one window
};

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
    // (epoch, (server µs, rows)): one entry per push.
    std::set<std::pair<int, std::pair<std::int64_t, std::int64_t>>> pushes_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace rowpump::chaos
