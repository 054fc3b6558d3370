#pragma once

// What a queue's Redis keys say of it, read the same way by `rowpump status`
// (QueueStatusReader) and by the observer behind /metrics and the dashboard.

#include <optional>
#include <string>
#include <vector>

#include "rowpump/common/protocol/key_gauges.hpp"
#include "rowpump/common/protocol/queue_gauges.hpp"
#include "rowpump/common/protocol/queue_state.hpp"
#include "rowpump/common/redis/redis.hpp"

namespace rowpump {

struct QueueRedisView {
    protocol::QueueState state;
    std::optional<std::string> paused_by;
    std::optional<protocol::QueueGauges> gauges;         // the leader's published due count
    std::vector<protocol::DispatcherEntry> dispatchers;  // fresh ones only (kDispatcherFresh)
    std::optional<protocol::KeyGauges> key_gauges;       // group_by: the leader's top keys
    protocol::KeyLimits key_limits;                      // the per-key limits, as set (bounded)
    std::int64_t read_at_ms = 0;
};

// `redis`: the node serving the queue's keys.
QueueRedisView read_queue_redis_view(redis::Connection& redis, const std::string& queue);

}  // namespace rowpump
