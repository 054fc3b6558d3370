#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/in_flight.hpp"
#include "rowpump/dispatcher/loop/leadership.hpp"
#include "rowpump/dispatcher/loop/lease_keeper.hpp"
#include "rowpump/dispatcher/loop/outage_log.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"
#include "rowpump/dispatcher/loop/shard_balance.hpp"
#include "rowpump/dispatcher/mysql/outcome_store.hpp"
#include "rowpump/dispatcher/observe/queue_health.hpp"
#include "rowpump/dispatcher/observe/queue_metrics.hpp"
#include "rowpump/dispatcher/redis/redis_queue.hpp"

namespace rowpump {

// One queue's loop (DESIGN.md, "The dispatch cycle"): capacity, claim, push, apply
// outcomes, take back dead workers' tasks, sleep.
//
// Outcomes are applied on a second MySQL connection. While a backlog is swept, that happens
// in a thread of its own while the cycle claims on the first connection: MariaDB runs the two
// kinds of statement side by side instead of taking turns. The cycle still waits for both
// before the next round, so Redis is only used from the queue's own thread and an outcome
// batch is acknowledged after its commit.
class QueueRunner {
public:
    // `source`: the queue, or one shard of it (queue_sources); outlives the runner.
    // `balance`: shared by the loops of the queue's shards in this process; null without shards.
    QueueRunner(const QueueSource& source, const std::atomic<bool>& stopping, std::mutex& mutex,
                std::condition_variable& wake, QueueMetrics& metrics, QueueHealth& health,
                ShardBalance* balance);
    void run();

private:
    bool connect();  // false while not connected or not the leader; renews the leader lock
    void resign();
    // With shards, as leader: hands the shard to a stand-by whose process leads fewer.
    void balance_shards();
    Millis failed(const std::string& what, bool transient);
    Millis cycle();  // one round; returns how long to sleep
    std::int64_t dispatch(TimePoint now, std::int64_t capacity);
    // claim: redis: the rows to push, claimable and not in flight (see InFlight).
    std::vector<ClaimedRow> scan_claimable(std::int64_t capacity);
    // claim: redis: learns what is in flight as a new leader; marks stale outcomes; drops
    // tasks no Redis list holds any more.
    void know_in_flight();
    void mark_stale(std::vector<DoneEntry>& done);
    void finish_in_flight(const std::vector<DoneEntry>& entries);
    void audit_in_flight();
    // Rows the push window in Redis takes now (`rate`, shared by every dispatcher).
    std::int64_t read_window();
    // Removes the done messages from the done list, moves the refused ones aside, counts and
    // logs.
    std::int64_t ack_done(const std::vector<DoneEntry>& done, const AppliedCounts& counts);
    void reap();
    void apply_reaped();
    // Applies the accepted entries; when MySQL refuses a value in the batch, applies them one
    // at a time and marks the refused ones with MySQL's error.
    static AppliedCounts apply_isolating(QueueStore& store, std::vector<DoneEntry>& entries);
    // Sleeps until `pause` has passed, the process stops or, while leading with room to
    // claim, a producer nudges the queue (NudgeListener).
    void sleep_for(Millis pause);
    void nudged();

    const Config& config_;
    const QueueConfig& queue_;
    const std::string label_;    // the queue's name, with its shard's: for log lines
    const std::int64_t shares_;  // loops pushing to the queue's ready list: its shards, or 1
    const std::atomic<bool>& stopping_;
    std::mutex& mutex_;
    std::condition_variable& wake_;
    QueueMetrics& metrics_;  // what /metrics, /healthz and the dashboard see of this loop
    QueueHealth& health_;    // what systemd's STATUS= and watchdog see of this loop
    GaugePart leading_;      // this loop's part of the queue's gauges
    GaugePart mysql_connected_;
    GaugePart redis_connected_;

    std::unique_ptr<QueueStore> store_;          // claims
    std::unique_ptr<QueueStore> outcome_store_;  // outcomes of the done list
    std::optional<RedisQueue> redis_;
    Leadership leadership_;
    RateLimiter limiter_;
    TimePoint window_opens_{};  // when the push window in Redis takes another row
    Backoff idle_;
    Backoff reconnect_;
    OutageLog outage_;
    TimePoint next_reap_{};
    std::vector<DoneEntry> reaped_;  // taken back from dead workers, not yet applied
    LeaseKeeper lease_keeper_;       // runs before every claim (claim: mysql)
    InFlight in_flight_;             // claim: redis
    TimePoint next_audit_{};         // claim: redis: when in_flight_ is next checked
    TimePoint next_sweep_{};         // claim: redis: when the scan may start over
    bool nudged_ = false;            // under mutex_: a nudge came since the last sleep
    bool nudge_wakes_ = false;       // the last cycle left room to claim: a nudge may end the sleep
    bool nudged_cycle_ = false;      // a nudge ended the last sleep: this cycle claims first
    ShardBalance* balance_;
    TimePoint next_balance_{};
    TimePoint handed_over_until_{};  // leaves the lock to the stand-by it was handed to
};

}  // namespace rowpump
