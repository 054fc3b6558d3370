#pragma once

// The Redis side of one queue, as the dispatcher sees it: push ready messages, read done
// messages, take back the tasks of dead workers, keep counters. One connection, one thread.
// A redis::IoError leaves it unusable: drop it and open a new one.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rowpump/common/protocol.hpp"
#include "rowpump/common/redis.hpp"
#include "rowpump/dispatcher/config.hpp"

namespace rowpump {

redis::Options redis_options(const RedisConfig& config);

// Counter increments for rowpump:{q}:stats, field -> amount.
using StatsDelta = std::map<std::string, std::int64_t>;

class RedisQueue {
public:
    static RedisQueue open(const RedisConfig& config, const QueueConfig& queue);

    // Announces the queue to workers (rowpump:{q}:meta).
    void announce();
    std::int64_t ready_length();
    // RPUSH in one pipelined round trip, counted as "dispatched".
    void push(const std::vector<std::string>& messages);
    // Up to `max` done messages, oldest first, left in place until ack_done.
    std::vector<std::string> peek_done(std::int64_t max);
    // Removes the first `count` done messages, moves `bad` ones aside and adds to counters,
    // in one round trip.
    void ack_done(std::size_t count, const std::vector<std::string>& bad, const StatsDelta& stats);
    // Moves messages to the bad list (for ones not taken from the done list).
    void move_aside(const std::vector<std::string>& bad, const StatsDelta& stats);
    // Takes back the ready messages held by workers whose heartbeat expired.
    // Returns (worker id, its messages) for each such worker.
    std::vector<std::pair<std::string, std::vector<std::string>>> reap_dead_workers();

private:
    RedisQueue(redis::Connection conn, const QueueConfig& queue);
    void append_stats(const StatsDelta& stats, std::size_t& replies);
    void append_aside(const std::vector<std::string>& bad, const StatsDelta& stats, std::size_t& replies);

    redis::Connection conn_;
    const QueueConfig& queue_;
    protocol::Keys keys_;
    std::string reap_sha_;
};

}  // namespace rowpump
