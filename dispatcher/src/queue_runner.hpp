#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "rowpump/common/protocol.hpp"
#include "rowpump/dispatcher/config.hpp"
#include "rowpump/dispatcher/pacing.hpp"
#include "rowpump/dispatcher/queue_store.hpp"
#include "rowpump/dispatcher/redis_queue.hpp"

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
    QueueRunner(const Config& config, const QueueConfig& queue, const std::atomic<bool>& stopping,
                std::mutex& mutex, std::condition_variable& wake);
    void run();

private:
    bool connect();         // false while not connected or not the leader
    Millis cycle();         // one round; returns how long to sleep
    std::int64_t dispatch(TimePoint now, std::int64_t capacity);
    // Done messages read from Redis, not yet removed from it.
    struct DoneBatch {
        std::vector<std::string> messages;      // all of them, in list order
        std::vector<protocol::Done> outcomes;   // the valid ones
        std::vector<std::string> valid;         // their messages
        std::vector<std::string> bad;           // refused (malformed, or by MySQL)
        std::string first_error;
    };
    DoneBatch take_done();
    // Removes the batch from the done list, moves its refused messages aside, counts and logs.
    std::int64_t ack_done(const DoneBatch& done, const AppliedCounts& counts);
    void reap();
    void apply_reaped();
    // Applies outcomes; when MySQL refuses a value in the batch, applies them one at a time
    // and moves the refused ones (their `messages`) to `bad`.
    static AppliedCounts apply_isolating(QueueStore& store, const std::vector<protocol::Done>& outcomes,
                                         const std::vector<std::string>& messages, std::vector<std::string>& bad,
                                         std::string& first_error);
    void sleep_for(Millis pause);

    const Config& config_;
    const QueueConfig& queue_;
    const std::atomic<bool>& stopping_;
    std::mutex& mutex_;
    std::condition_variable& wake_;

    std::unique_ptr<QueueStore> store_;          // claims; holds the leader lock
    std::unique_ptr<QueueStore> outcome_store_;  // outcomes of the done list
    std::optional<RedisQueue> redis_;
    bool leader_ = false;
    RateLimiter limiter_;
    Backoff idle_;
    Backoff reconnect_;
    TimePoint next_reap_{};
    std::vector<protocol::Done> reaped_;  // taken back from dead workers, not yet applied
};

}  // namespace rowpump
