#pragma once

// The Redis side of one queue, as the dispatcher sees it: push claimed rows as ready
// messages, read done messages, take back the tasks of dead workers, keep counters. Speaks
// protocol types; every key, message and script comes from common/. One connection, one
// thread. A redis::IoError leaves it unusable: drop it and open a new one.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/common/redis/redis.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/claim.hpp"
#include "rowpump/dispatcher/redis/redis_side.hpp"

namespace rowpump {

class RedisQueue : public RedisSide {
public:
    // `leader_id`: this dispatcher's id in the leader lock (common/lua/lead.lua), which fences
    // pushes and done-list trims.
    static RedisQueue open(const RedisAddress& address, const QueueConfig& queue,
                           std::string leader_id);

    const protocol::Keys& keys() const override { return keys_; }

    // Announces the queue to workers (rowpump:{q}:meta).
    void announce() override;
    std::int64_t ready_length() override;
    Lead lead() override;
    // Gives the leader lock up if this dispatcher holds it.
    void resign() override;
    // The rows' ready messages, RPUSHed and counted as "dispatched" in one script call
    // (common/lua/push.lua); with a `rate`, only if the push window takes all of them, and then
    // recorded in it; with rate_per_key, the same for each of `keys` (Keys::key_rate). Without
    // rows, reads the windows. A row whose ready message (with its
    // payload) would pass payload_max is reported failed in the done list instead, once the
    // push went through.
    PushWindow push(const std::vector<ClaimedRow>& rows, const std::vector<KeyRate>& keys) override;
    std::vector<std::pair<std::string, std::string>> key_limits(std::size_t most) override;
    // With shards, first routes the queue's new reports to their shards' done lists
    // (common/lua/route_done.lua); then, from this shard's list: up to `max` done messages, oldest
    // first, parsed and checked against the queue's values; left in the done list until ack_done.
    // Bounded in bytes in Redis before they are read (common/lua/take_done.lua): messages over
    // protocol::kMaxMessageBytes at the head go to the bad list unread, and a batch stops at a
    // few MiB (`more` then says the list holds more to read now). Read in the same round trip:
    // whether the queue is paused (rowpump:{q}:paused, see common/queue_pause.hpp).
    Inbox take_done(std::int64_t max) override;
    // Removes `entries` (the head of the done list) from it, moves the refused ones aside and
    // adds to counters (refused ones as "bad"), in one round trip. Returns false, having
    // removed nothing, when another dispatcher holds the leader lock.
    [[nodiscard]] bool ack_done(const std::vector<DoneEntry>& entries, StatsDelta stats) override;
    // The same for entries that are not in the done list: moves the refused ones aside.
    void move_aside(const std::vector<DoneEntry>& entries, StatsDelta stats) override;
    // Takes back the tasks held by workers whose heartbeat expired.
    std::vector<ReapedWorker> reap_dead_workers() override;
    std::int64_t server_time_ms() override;
    // Which of `messages` (ready messages) are still held: waiting in the ready list, in a
    // listed worker's processing list, or reported in the done list (common/lua/held.lua).
    std::vector<std::string> held(const std::vector<std::string>& messages) override;
    // Every task held so, as ready messages (for InFlight::load).
    std::vector<std::string> held_all() override;
    // The queue's token secret: a fresh one is written unless one is there (SET NX, so
    // dispatchers that race agree), then read back, at most kSecretDigits + 1 bytes of it.
    // Throws redis::ReplyError when the key holds something else.
    std::string token_secret() override;
    void add_stats(const StatsDelta& stats) override;

    // With shards (shard_balance.hpp): offers this stand-by for its shard, for leader_timeout.
    void offer_standby() override;
    // Who leads each shard of the queue ("" for none), and who stands by for this one.
    ShardLeaders shard_leaders() override;

private:
    std::vector<std::string> look_held(const std::vector<std::string>& messages);
    std::string fresh_epoch();
    RedisQueue(redis::Connection conn, const QueueConfig& queue, std::string leader_id);
    void append_stats(const StatsDelta& stats, std::size_t& replies);
    void append_aside(const std::vector<std::string>& bad, StatsDelta stats, std::size_t& replies);

    redis::Connection conn_;
    const QueueConfig& queue_;
    protocol::Keys keys_;
    std::string leader_id_;
    // With shards (queue.shard set): keys_.leader and keys_.done are the shard's own; these
    // are the queue's done list, where workers report, and every shard's done list.
    std::string queue_done_;
    std::vector<std::string> shard_done_;
    std::vector<std::string> shard_leader_;  // every shard's leader lock
    std::string standby_;                    // this shard's stand-by offer
};

}  // namespace rowpump
