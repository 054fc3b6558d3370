#include "rowpump/dispatcher/loop/reaper.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "loop/done_entries.hpp"
#include "rowpump/common/log_text.hpp"

namespace rowpump {

void Reaper::reap(RedisSide& redis, Outcomes& outcomes, ClaimPath& path) {
    next_reap_ = Clock::now() + queue_.reap_interval;
    const auto clock = redis_clock_.look(redis.server_time_ms(), Clock::now());
    if (clock.step) {
        const auto step = clock.step->count();
        if (step > 0) {
            spdlog::warn(
                "queue {}: the Redis server's clock stepped forward by {} ms since the last "
                "look: heartbeats that expired with it are not taken for dead workers; "
                "taking nothing back for {} ms, while live workers beat again",
                label_, step, RedisClockWatch::kStepGrace.count());
        } else {
            spdlog::warn(
                "queue {}: the Redis server's clock stepped back by {} ms since the last look: "
                "the heartbeats of workers that die now expire that much later",
                label_, -step);
        }
    }
    if (!clock.reap) {
        apply(redis, outcomes, path);
        return;
    }
    for (auto& worker : redis.reap_dead_workers()) {
        if (worker.reported > 0) {  // with shards: reported as retries, applied by each shard
            metrics_.add(Counter::reaped, static_cast<std::int64_t>(worker.reported));
            spdlog::warn(
                "queue {}: worker {} stopped sending heartbeats; took back {} tasks and reported "
                "them as retries",
                label_, log_text(worker.worker_id), worker.reported);
            continue;
        }
        for (auto& task : worker.tasks) {
            DoneEntry entry;
            entry.message = task.message;
            entry.done.emplace();
            entry.done->task = std::move(task);
            entry.done->verb = Verb::retry;
            entry.done->reason = "worker " + worker.worker_id + " stopped sending heartbeats";
            entry.done->delay = Millis(0);
            reaped_.push_back(std::move(entry));
        }
        spdlog::warn("queue {}: worker {} stopped sending heartbeats; took back {} tasks", label_,
                     log_text(worker.worker_id), worker.tasks.size() + worker.malformed);
    }
    apply(redis, outcomes, path);
}

void Reaper::apply(RedisSide& redis, Outcomes& outcomes, ClaimPath& path) {
    if (reaped_.empty()) return;
    path.on_outcomes_taken(reaped_);  // a task the dispatcher did not issue is stale
    AppliedCounts counts = apply_isolating(outcomes, reaped_);
    counts.stale +=
        std::count_if(reaped_.begin(), reaped_.end(), [](const DoneEntry& e) { return e.stale; });
    // Those whose row another transaction holds locked stay here, tried again next cycle.
    std::vector<DoneEntry> finished, locked;
    for (auto& entry : reaped_) (entry.locked ? locked : finished).push_back(std::move(entry));
    reaped_ = std::move(locked);
    if (finished.empty()) return;
    redis.move_aside(finished, {{protocol::kStatReaped, static_cast<std::int64_t>(finished.size())},
                                {protocol::kStatRetried, counts.retried},
                                {protocol::kStatDead, counts.dead},
                                {protocol::kStatStale, counts.stale},
                                {protocol::kStatAgain, counts.again}});
    path.on_outcomes_finished(finished);
    const auto [refused, first] = refusals(finished);
    metrics_.applied(counts, static_cast<std::int64_t>(refused),
                     static_cast<std::int64_t>(finished.size()));
    if (refused > 0) {
        spdlog::warn("queue {}: moved {} tasks taken back from workers to {}; first: {}", label_,
                     refused, redis.keys().bad, first);
    }
}

}  // namespace rowpump
