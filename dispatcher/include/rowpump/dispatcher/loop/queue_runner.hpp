#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/claim_path.hpp"
#include "rowpump/dispatcher/loop/leadership.hpp"
#include "rowpump/dispatcher/loop/locked_row_watch.hpp"
#include "rowpump/dispatcher/loop/outage_log.hpp"
#include "rowpump/dispatcher/loop/outcomes.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"
#include "rowpump/dispatcher/loop/queue_links.hpp"
#include "rowpump/dispatcher/loop/reaper.hpp"
#include "rowpump/dispatcher/loop/shard_balance.hpp"
#include "rowpump/dispatcher/observe/queue_health.hpp"
#include "rowpump/dispatcher/observe/queue_metrics.hpp"
#include "rowpump/dispatcher/redis/redis_side.hpp"

namespace rowpump {

// One queue's loop (docs/architecture.md, "The path of a row"): capacity, claim, push, apply
// outcomes, take back dead workers' tasks, sleep. It only orchestrates: the servers are behind
// QueueLinks (MysqlSide, RedisSide), and what depends on the claim mode behind its ClaimPath,
// called at named hooks.
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
    // `links` and `path`: the servers and the claim path (live_links, make_claim_path); they
    // outlive the runner.
    QueueRunner(const QueueSource& source, const std::atomic<bool>& stopping, std::mutex& mutex,
                std::condition_variable& wake, QueueMetrics& metrics, QueueHealth& health,
                ShardBalance* balance, QueueLinks& links, ClaimPath& path);
    // Steps and sleeps until `stopping`.
    void run();
    // One round: connect if needed, lead, run a cycle, and handle its failure; returns how
    // long to sleep before the next.
    Millis step();

private:
    bool connect();  // false while not connected or not the leader; renews the leader lock
    void drop_redis();
    void resign();
    // With shards, as leader: hands the shard to a stand-by whose process leads fewer.
    void balance_shards();
    Millis failed(const std::string& what, bool transient);
    Millis cycle();  // one round; returns how long to sleep
    std::int64_t dispatch(TimePoint now, std::int64_t capacity);
    // Rows the push window in Redis takes now (`rate`, shared by every dispatcher).
    std::int64_t read_window();
    // Removes the done messages from the done list, moves the refused ones aside, counts and
    // logs.
    std::int64_t ack_done(const std::vector<DoneEntry>& done, const AppliedCounts& counts);
    // Logs, once each, the rows whose outcome has waited for another transaction's lock for
    // a while (of the done list, and of tasks taken back).
    void watch_locked(const std::vector<DoneEntry>& done);
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

    QueueLinks& links_;
    ClaimPath& path_;
    std::unique_ptr<MysqlSide> mysql_;
    std::unique_ptr<RedisSide> redis_;
    Reaper reaper_;  // tasks taken back from dead workers
    LockedRowWatch locked_outcomes_;
    Leadership leadership_;
    RateLimiter limiter_;
    TimePoint window_opens_{};  // when the push window in Redis takes another row
    Backoff idle_;
    Backoff reconnect_;
    OutageLog outage_;
    bool nudged_ = false;        // under mutex_: a nudge came since the last sleep
    bool nudge_wakes_ = false;   // the last cycle left room to claim: a nudge may end the sleep
    bool nudged_cycle_ = false;  // a nudge ended the last sleep: this cycle claims first
    ShardBalance* balance_;
    TimePoint next_balance_{};
    TimePoint handed_over_until_{};  // leaves the lock to the stand-by it was handed to
};

}  // namespace rowpump
