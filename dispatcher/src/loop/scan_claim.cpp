#include "loop/scan_claim.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

void ScanClaim::on_lead(RedisSide& redis, bool leading, bool took_free) {
    // A leader that finds its lock free lost it at some point (a freeze, a Redis that lost its
    // data), and another may have pushed meanwhile: it learns what is in flight anew.
    if (took_free || !leading) in_flight_.forget();  // learned again when this one leads
    if (!leading || in_flight_.known()) return;
    in_flight_.load(redis.held_all());
    next_audit_ = Clock::now() + lease_look_interval(queue_);
    spdlog::info("queue {}: {} tasks in flight", queue_.label(), in_flight_.size());
}

void ScanClaim::on_outcomes_taken(std::vector<DoneEntry>& done) {
    for (auto& entry : done) {
        if (entry.accepted() && in_flight_.stale(entry.done->task)) entry.stale = true;
    }
}

void ScanClaim::on_outcomes_finished(const std::vector<DoneEntry>& entries) {
    for (const auto& entry : entries) {
        if (entry.accepted() && entry.done->verb != Verb::extend)
            in_flight_.finished(entry.done->task);
    }
}

std::int64_t ScanClaim::before_claim(RedisSide& redis, std::int64_t,
                                     const std::vector<DoneEntry>& reaped) {
    const auto now = Clock::now();
    if (now < next_audit_ || in_flight_.size() == 0) return 0;
    // As often as the keeper looks at leases in mysql mode: a task no list holds any more
    // (Redis lost its data) makes its row wait about as long in either mode.
    next_audit_ = now + lease_look_interval(queue_);
    std::vector<Task> taken_back;
    for (const auto& entry : reaped) {
        if (entry.done) taken_back.push_back(entry.done->task);
    }
    const auto dropped = in_flight_.keep_only(redis.held(in_flight_.messages()), taken_back);
    if (dropped > 0) {
        spdlog::warn(
            "queue {}: {} tasks in flight are in no Redis list any more (Redis lost data, or "
            "their messages were set aside); their rows are claimable again",
            queue_.label(), dropped);
    }
    return 0;  // no lease in the row: nothing to renew
}

const std::vector<ClaimedRow>& ScanClaim::claim(std::int64_t capacity) {
    const auto wanted = static_cast<std::size_t>(capacity);
    // Rows whose retry delay passed first: behind the scan, they would wait for a sweep.
    rows_ = store_->scan_retried(capacity, in_flight_);
    std::unordered_set<std::string> taken;  // a row the scan meets again is pushed once
    for (const auto& row : rows_) taken.insert(row.id);
    bool swept = false;
    while (rows_.size() < wanted) {
        if (store_->sweeping_from_start() && !swept) {
            swept = true;
            next_sweep_ = Clock::now() + queue_.poll_max;
        }
        const auto want = static_cast<std::int64_t>(wanted - rows_.size());
        // A sweep from the start meets the rows in flight first: it reads larger pages.
        const auto read =
            store_->sweeping_from_start() ? std::max<std::int64_t>(want, queue_.batch) : want;
        auto page = store_->scan(want, read, in_flight_);
        for (auto& row : page.rows) {
            if (taken.insert(row.id).second) rows_.push_back(std::move(row));
        }
        if (!page.ended) continue;
        // Rows behind the scan that came due (revived, unlocked, made due by the application)
        // are found by a sweep from the start, which reads every row in flight: at most one
        // per poll.max.
        if (swept || Clock::now() < next_sweep_) break;
        store_->rescan_from_start();
    }
    return rows_;
}

std::string ScanClaim::describe() const {
    return "claim: redis: each task writes its row once, with its outcome; rows in flight "
           "still look due in MySQL and the leader keeps them apart. Pick mysql for rows "
           "that show their claim, for shards or an order_by of several columns";
}

std::vector<std::string> ScanClaim::statements(const QueueSql& sql) const {
    return {sql.scan_retried(), sql.scan(), sql.scan_from(), sql.lock_scanned(1)};
}

}  // namespace rowpump
