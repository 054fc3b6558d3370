#pragma once

// The Redis side of one queue as the runner uses it: RedisQueue talks to Redis (each call is
// documented there); a unit test gives a fake.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/claim.hpp"
#include "rowpump/dispatcher/loop/key_limits.hpp"

namespace rowpump {

// Counter increments for rowpump:{q}:stats, field -> amount.
using StatsDelta = protocol::Stats;

// A done message: its text, and what became of it. Refused entries go to the bad list.
struct DoneEntry {
    std::string message;                 // verbatim, as found in Redis
    std::optional<protocol::Done> done;  // parsed, and what is applied; empty when malformed
    std::string error;                   // why it is refused (malformed, a value MySQL refused)
    // Why the report is applied as a failed attempt instead of what it said (values that do
    // not fit the queue's on_success); its message goes to the bad list as well.
    std::string problem;
    // With claim: redis, another task of the same row is in flight (InFlight::stale): not
    // applied, counted as stale.
    bool stale = false;
    // Another transaction held the row locked (an application's SELECT ... FOR UPDATE), so
    // the outcome was not applied: it goes back to the end of the done list (ack_done) and is
    // tried again by a later cycle, the other outcomes of its batch applied meanwhile.
    bool locked = false;

    bool accepted() const { return done.has_value() && error.empty() && !stale; }
    bool set_aside() const { return !done.has_value() || !error.empty() || !problem.empty(); }
    const std::string& why_set_aside() const { return error.empty() ? problem : error; }
};

// The queue's push window (`rate`), read or written by a push, on the Redis server's clock.
struct PushWindow {
    bool leader = true;                 // false: another dispatcher holds the leader lock
    bool pushed = false;                // the push went through (false: the window was full)
    std::int64_t rows_left = 0;         // rows the window takes now
    std::chrono::microseconds wait{0};  // until it takes one more row; 0: now
    std::vector<KeyWindow> keys;        // with rate_per_key: the keys', in the order asked
};

// The tasks taken back from a worker whose heartbeat expired.
struct ReapedWorker {
    std::string worker_id;
    std::vector<Task> tasks;
    std::size_t malformed = 0;  // messages that were no task, moved to the bad list
    // With shards: tasks reported as retries to the done list instead (kReapToDoneScript),
    // each applied by its own shard's leader.
    std::size_t reported = 0;
};

class RedisSide {
public:
    // The lead script (kLeadScript): who holds the lock now, whether this dispatcher took it
    // free, and the queue's epoch (Keys::epoch; "" when none): it changes when Redis loses its
    // data.
    struct Lead {
        std::string holder;
        bool took_free = false;
        std::string epoch;
    };
    // Done messages taken, and whether the queue is paused.
    struct Inbox {
        std::vector<DoneEntry> done;
        bool paused = false;
        bool more = false;  // the done list holds more to read now (a batch stops at a few MiB)
    };
    // Who leads each shard of the queue ("" for none), and who stands by for this one.
    struct ShardLeaders {
        std::vector<std::string> leaders;
        std::string standby;
    };

    virtual ~RedisSide() = default;
    virtual const protocol::Keys& keys() const = 0;
    virtual void announce() = 0;
    virtual std::int64_t ready_length() = 0;
    // Takes or renews the leader lock for `leader_timeout`.
    virtual Lead lead() = 0;
    virtual void resign() = 0;
    // `keys`: with rate_per_key, the keys of `rows` (or, without rows, those to read).
    virtual PushWindow push(const std::vector<ClaimedRow>& rows,
                            const std::vector<KeyRate>& keys) = 0;
    // The key_limits hash as it is (field, value): at most `most` fields; more: throws
    // redis::ReplyError saying how many it holds.
    virtual std::vector<std::pair<std::string, std::string>> key_limits(std::size_t most) = 0;
    virtual Inbox take_done(std::int64_t max) = 0;
    // Removes `entries`, the batch take_done() returned, from the head of the done list, and
    // puts those marked `locked` back at its end; false, changing nothing, when this
    // dispatcher no longer holds the leader lock.
    [[nodiscard]] virtual bool ack_done(const std::vector<DoneEntry>& entries,
                                        StatsDelta stats) = 0;
    virtual void move_aside(const std::vector<DoneEntry>& entries, StatsDelta stats) = 0;
    virtual std::vector<ReapedWorker> reap_dead_workers() = 0;
    // The Redis server's wall clock (TIME), in ms since the epoch.
    virtual std::int64_t server_time_ms() = 0;
    virtual std::vector<std::string> held(const std::vector<std::string>& messages) = 0;
    virtual std::vector<std::string> held_all() = 0;
    // The queue's token secret (Keys::secret, TokenMac::valid_secret), written first if there
    // is none.
    virtual std::string token_secret() = 0;
    virtual void add_stats(const StatsDelta& stats) = 0;
    virtual void offer_standby() = 0;
    virtual ShardLeaders shard_leaders() = 0;
};

}  // namespace rowpump
