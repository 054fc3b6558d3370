#pragma once

// What `rowpump status` shows of a queue: Redis state, the leader's published due count
// (rowpump:{q}:gauges) or, when no leader published one lately, a count of its own made the
// same bounded way at most every due_count.interval (summed over the shards of a queue that has
// them), and who leads.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mysql/mysql_servers.hpp"
#include "rowpump/common/protocol/key_gauges.hpp"
#include "rowpump/common/protocol/queue_gauges.hpp"
#include "rowpump/common/protocol/queue_state.hpp"
#include "rowpump/common/redis/redis_connections.hpp"
#include "rowpump/dispatcher/config/config.hpp"

namespace rowpump {

struct QueueStatus {
    std::string queue;
    protocol::QueueState redis;
    std::optional<protocol::QueueGauges> gauges;  // nullopt: the count failed (timed out)
    bool counted_here = false;                    // no leader had published a count
    std::string leader;                           // "" when no dispatcher leads
    std::vector<std::string> standby;
    std::optional<std::string> paused_by;
    std::optional<protocol::KeyGauges> key_gauges;  // group_by: the leader's top keys
    protocol::KeyLimits key_limits;                 // the per-key limits, as set (bounded)
};

class QueueStatusReader {
public:
    QueueStatusReader(const Config& config, MysqlServers& mysql, redis::Connections& redis)
        : config_(config), mysql_(mysql), redis_(redis) {}

    QueueStatus read(const QueueConfig& queue);

private:
    std::optional<protocol::QueueGauges> own_count(const QueueConfig& queue);

    const Config& config_;
    MysqlServers& mysql_;
    redis::Connections& redis_;
    struct Counted {
        std::chrono::steady_clock::time_point at;
        std::optional<protocol::QueueGauges> gauges;
    };
    std::map<std::string, Counted> counted_;
};

}  // namespace rowpump
