#pragma once

// Tasks taken back from workers whose heartbeat expired (RedisSide::reap_dead_workers), applied
// as failed attempts. Kept in memory until applied: a MySQL outage here must not lose them (if
// this process dies instead, the rows come back when their lease ends), nor a row another
// transaction holds locked (DoneEntry::locked), whose entry waits here for the lock to go.

#include <string>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/claim_path.hpp"
#include "rowpump/dispatcher/loop/outcomes.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"
#include "rowpump/dispatcher/loop/redis_clock_watch.hpp"
#include "rowpump/dispatcher/observe/queue_metrics.hpp"
#include "rowpump/dispatcher/redis/redis_side.hpp"

namespace rowpump {

class Reaper {
public:
    Reaper(const QueueConfig& queue, std::string label, QueueMetrics& metrics)
        : queue_(queue), label_(std::move(label)), metrics_(metrics) {}

    // Every reap_interval, and while tasks taken back wait to be applied.
    bool due(TimePoint now) const { return !reaped_.empty() || now >= next_reap_; }
    // Takes back the dead workers' tasks, applies them on `outcomes`, moves the refused ones
    // aside and counts them in Redis, and tells `path` they are finished. Takes nothing back
    // for a while after the Redis server's clock stepped forward (RedisClockWatch).
    void reap(RedisSide& redis, Outcomes& outcomes, ClaimPath& path);
    // Taken back, not yet applied (those marked `locked` wait for their row's lock).
    const std::vector<DoneEntry>& pending() const { return reaped_; }

private:
    void apply(RedisSide& redis, Outcomes& outcomes, ClaimPath& path);

    const QueueConfig& queue_;
    const std::string label_;
    QueueMetrics& metrics_;
    TimePoint next_reap_{};
    RedisClockWatch redis_clock_;
    std::vector<DoneEntry> reaped_;
};

}  // namespace rowpump
