#pragma once

// The Redis keys of a queue. docs/protocol.md lists them for workers written in other
// languages; keep the two in step.

#include <string>
#include <string_view>

namespace rowpump::protocol {

// Every key of a queue carries the queue name as a Redis Cluster hash tag:
// rowpump:{<queue>}:<suffix>.
struct Keys {
    std::string ready;    // list: ready messages waiting for a worker
    std::string done;     // list: done messages waiting for the dispatcher
    std::string bad;      // list: malformed messages moved aside
    std::string workers;  // set: ids of workers that may hold tasks
    std::string meta;     // hash: what the dispatcher announces about the queue (queue_meta.hpp)
    std::string stats;    // hash: counters kept by the dispatcher (queue_stats.hpp)
    std::string gauges;   // hash: the leader's due count and oldest due age (queue_gauges.hpp)
    std::string dispatchers;  // hash: dispatcher id -> role and when it said so (queue_gauges.hpp)
    std::string paused;       // string: present while the queue is paused (queue_pause.hpp)
    std::string window;  // list: the pushes within the last `rate` period (common/lua/push.lua)
    // hash: with rate_per_key, each key's pushes within its period (common/lua/push.lua)
    std::string key_rate;
    // hash: per-key limits the operator sets (`rowpump limit`): field the key's value as text,
    // value "rate=N/period concurrency=N weight=N" (any of them; docs/fairness.md)
    std::string key_limits;
    std::string leader;  // string with a TTL: the leading dispatcher's id (common/lua/lead.lua)
    // string: a value the first leader since Redis last lost its data wrote (common/lua/lead.lua)
    std::string epoch;
    // string: the secret that signs claim: redis tokens, written by the first leader
    // (dispatcher/include/rowpump/dispatcher/loop/token_mac.hpp); never read by workers
    std::string secret;
    std::string nudge;       // pub/sub channel: a message wakes the leading dispatcher to claim now
    std::string key_gauges;  // hash: the leader's per-key figures of its top keys (key_gauges.hpp)

    std::string processing(std::string_view worker_id) const;  // list: a worker's tasks in hand
    std::string heartbeat(std::string_view worker_id) const;   // string with a TTL
    // A queue with shards (its rows on several MySQL servers) has one leader lock and one done
    // list per shard; the done list above is where workers report, and route_done.lua routes
    // each report from there to its shard's list.
    std::string shard_leader(std::string_view shard) const;  // string with a TTL
    std::string shard_done(std::string_view shard) const;    // list
    // A stand-by's id offered for the shard (shard_balance.hpp); string with a TTL.
    std::string shard_standby(std::string_view shard) const;

    std::string prefix;  // "rowpump:{<queue>}:"
};
Keys keys_for(std::string_view queue);

// Queue names and worker ids go into key names: [A-Za-z0-9_.-], 1 to 64 characters.
bool is_valid_name(std::string_view name);

}  // namespace rowpump::protocol
