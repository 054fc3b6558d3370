#pragma once

// Pure arithmetic of the dispatch cycle: how many rows may go now, and how long to wait.
// Time is passed in, so tests drive it with an injected clock.

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "rowpump/common/backoff.hpp"
#include "rowpump/dispatcher/config/config.hpp"

namespace rowpump {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

// Strict sliding-window limit: at most rate.count rows in any window of rate.per. With "1/3s"
// no two dispatches are less than 3 s apart. Record each dispatch with the time its push
// completed, so the next one cannot reach Redis sooner than `per` after it.
class RateLimiter {
public:
    explicit RateLimiter(std::optional<Rate> rate) : rate_(rate) {}

    // Rows that may be dispatched at `now`; INT64_MAX when there is no limit.
    std::int64_t available(TimePoint now);
    // The earliest time at which at least one more row may go.
    TimePoint next_available(TimePoint now);
    void record(TimePoint at, std::int64_t rows);

private:
    void expire(TimePoint now);

    std::optional<Rate> rate_;
    std::deque<std::pair<TimePoint, std::int64_t>> window_;  // (push completed, rows), oldest first
    std::int64_t in_window_ = 0;
};

// min(batch, max_backlog - ready_length, rate_available), never negative. With `shares` > 1
// (a queue with that many shards, each pushing to the one ready list), a share of each room,
// rounded up: a shard that finds room first leaves some for the others, so none starves.
std::int64_t dispatch_capacity(std::int64_t batch, std::int64_t max_backlog,
                               std::int64_t ready_length, std::int64_t rate_available,
                               std::int64_t shares = 1);

// How often the tasks held for a lease are looked at against Redis: lease/8, at least 1 ms.
// LeaseKeeper renews leases running out this often (claim: mysql); ScanClaim drops tasks in
// flight that no list holds this often (claim: redis), so that such a task's row waits about
// as long in either mode.
Millis lease_look_interval(const QueueConfig& queue);

// Retry delay after `failed_attempts` failures (1 for the first): base * 2^(n-1) capped at
// `cap`, then "equal jitter": half of it fixed, the other half scaled by jitter in [0, 1).
Millis retry_backoff(const RetryConfig& retry, int failed_attempts, double jitter);

}  // namespace rowpump
