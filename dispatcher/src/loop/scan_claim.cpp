#include "loop/scan_claim.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "rowpump/common/duration.hpp"
#include "rowpump/common/log_text.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

void ScanClaim::on_lead(RedisSide& redis, bool leading, bool took_free, const std::string& epoch) {
    // The epoch changes when Redis loses its data (common/lua/lead.lua).
    const bool data_lost = !epoch.empty() && !epoch_.empty() && epoch != epoch_;
    if (!epoch.empty()) epoch_ = epoch;
    if (!leading) {
        in_flight_.forget();  // another leads: learned again when this one leads
        unsure_.clear();
        relearn_ = false;
        return;
    }
    const auto now = Clock::now();
    if (in_flight_.known()) {
        // Its own tasks stay in flight until their lease ends, held in Redis or not. One that
        // took its lock back free may have been followed by another leader: it learns what
        // Redis holds as well.
        if (!took_free && !relearn_ && unsure_.empty()) return;
        if (!unsure_.empty()) in_flight_.drop_unless_held(unsure_, redis.held(unsure_));
        unsure_.clear();
        in_flight_.learn(held_issued(redis), now + queue_.lease);
        relearn_ = false;
        if (data_lost) {
            spdlog::warn(
                "queue {}: Redis lost its data; the {} tasks in flight stay so until their lease "
                "ends, whether or not a worker still runs them",
                queue_.label(), in_flight_.size());
        }
        return;
    }
    in_flight_.learn(held_issued(redis), now + queue_.lease);
    relearn_ = false;
    next_audit_ = now + lease_look_interval(queue_);
    spdlog::info("queue {}: {} tasks in flight", queue_.label(), in_flight_.size());
    if (data_lost) {
        // Tasks another leader pushed before the loss may still run, and nothing says which.
        wait_out_until_ = now + queue_.lease;
        spdlog::warn(
            "queue {}: Redis lost its data before this dispatcher took the lead; it claims "
            "nothing for one lease ({}), while tasks pushed before may still run",
            queue_.label(), format_duration(queue_.lease));
    }
}

std::vector<std::string> ScanClaim::held_issued(RedisSide& redis) {
    // Read again at every look: after Redis lost its data the first leader writes a new one.
    mac_.emplace(queue_.name, redis.token_secret());
    auto held = redis.held_all();
    std::size_t forged = 0;
    std::string first;
    const auto kept = std::remove_if(held.begin(), held.end(), [&](const std::string& message) {
        std::string error;
        const auto task = protocol::parse_ready(message, error);
        if (task && mac_->verifies(task->id, task->token)) return false;
        if (forged++ == 0) first = message;
        return true;
    });
    held.erase(kept, held.end());
    if (forged > 0) {
        spdlog::warn(
            "queue {}: {} tasks and reports held in Redis carry a token no dispatcher of this "
            "queue issued (made up by a worker, or issued before Redis lost its data and its "
            "secret); not in flight: their reports are stale, their rows claimed as any other; "
            "first: {}",
            queue_.label(), forged, log_text(first, 200));
    }
    return held;
}

void ScanClaim::on_push_unknown() {
    in_flight_.add(rows_, Clock::now() + queue_.lease);
    for (const auto& row : rows_) unsure_.push_back(protocol::format_ready(row.id, row.token));
    relearn_ = true;
}

void ScanClaim::on_outcomes_taken(std::vector<DoneEntry>& done) {
    std::size_t foreign = 0;
    for (auto& entry : done) {
        if (entry.accepted() && !in_flight_.issued(entry.done->task)) {
            entry.stale = true;
            if (foreign++ == 0) {
                spdlog::info(
                    "queue {}: an outcome of a task not in flight is stale (another copy of its "
                    "row is in flight, its lease ended, or it was never issued): {}",
                    queue_.label(), log_text(entry.message, 200));
            }
        }
    }
}

void ScanClaim::on_outcomes_finished(const std::vector<DoneEntry>& entries) {
    const auto now = Clock::now();
    for (const auto& entry : entries) {
        if (!entry.accepted()) continue;
        if (entry.done->verb == Verb::extend) {
            in_flight_.extend(entry.done->task, now + entry.done->lease);
        } else {
            in_flight_.finished(entry.done->task);
        }
    }
}

std::int64_t ScanClaim::before_claim(RedisSide& redis, std::int64_t,
                                     const std::vector<DoneEntry>& reaped) {
    const auto now = Clock::now();
    if (now < next_audit_ || in_flight_.size() == 0) return 0;
    // As often as the keeper looks at leases in mysql mode.
    next_audit_ = now + lease_look_interval(queue_);
    std::vector<Task> taken_back;
    for (const auto& entry : reaped) {
        if (entry.done) taken_back.push_back(entry.done->task);
    }
    const auto audit =
        in_flight_.audit(redis.held(in_flight_.messages()), taken_back, now, now + queue_.lease);
    if (audit.dropped > 0) {
        spdlog::warn(
            "queue {}: {} tasks in flight were in no Redis list when their lease ended (Redis "
            "lost data, a consumer popped them and did not report, or their messages were set "
            "aside); their rows are claimable again",
            queue_.label(), audit.dropped);
    }
    if (audit.unheld > 0) {
        spdlog::debug(
            "queue {}: {} tasks in flight are in no Redis list; kept until their lease ends",
            queue_.label(), audit.unheld);
    }
    return 0;  // no lease in the row: nothing to renew
}

const std::vector<ClaimedRow>& ScanClaim::claim(std::int64_t capacity) {
    rows_.clear();
    if (Clock::now() < wait_out_until_ || !mac_) return rows_;
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
    for (auto& row : rows_) row.token = mac_->seal(row.id, row.token);
    return rows_;
}

std::string ScanClaim::describe() const {
    return std::string("claim: redis (") +
           (queue_.key_lines.count("claim") > 0 ? "set in the config" : "the default") +
           "): each task writes its row once, with its outcome; rows in flight "
           "still look due in MySQL and the leader keeps them apart. Pick mysql for rows "
           "that show their claim, for shards or an order_by of several columns";
}

std::vector<std::string> ScanClaim::statements(const QueueSql& sql) const {
    return {sql.scan_retried(), sql.scan(), sql.scan_from(), sql.lock_scanned(1)};
}

}  // namespace rowpump
