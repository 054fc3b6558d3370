#include "rowpump/dispatcher/loop/reaper.hpp"

#include <spdlog/spdlog.h>

#include "loop/done_entries.hpp"
#include "rowpump/common/log_text.hpp"

namespace rowpump {

void Reaper::reap(RedisSide& redis, Outcomes& outcomes, ClaimPath& path) {
    next_reap_ = Clock::now() + queue_.reap_interval;
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
    const AppliedCounts counts = apply_isolating(outcomes, reaped_);
    redis.move_aside(reaped_, {{protocol::kStatReaped, static_cast<std::int64_t>(reaped_.size())},
                               {protocol::kStatRetried, counts.retried},
                               {protocol::kStatDead, counts.dead},
                               {protocol::kStatStale, counts.stale},
                               {protocol::kStatAgain, counts.again}});
    path.on_outcomes_finished(reaped_);
    const auto [refused, first] = refusals(reaped_);
    metrics_.applied(counts, static_cast<std::int64_t>(refused),
                     static_cast<std::int64_t>(reaped_.size()));
    if (refused > 0) {
        spdlog::warn("queue {}: moved {} tasks taken back from workers to {}; first: {}", label_,
                     refused, redis.keys().bad, first);
    }
    reaped_.clear();
}

}  // namespace rowpump
