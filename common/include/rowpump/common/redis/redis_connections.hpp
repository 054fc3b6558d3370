#pragma once

// Connections for a caller that reads several queues (the observer, `rowpump status`): one
// per node that serves them. With a single server or Sentinel every queue shares one; with
// Cluster each queue's slot gets its own. A connection found broken is made again.

#include <map>
#include <string_view>

#include "rowpump/common/redis/redis.hpp"

namespace rowpump::redis {

class Connections {
public:
    explicit Connections(RedisAddress address) : address_(std::move(address)) {}

    // The connection to the node serving `key`; throws like Connection::connect_for.
    Connection& for_key(std::string_view key);
    // Forgets every connection, after an error that may have left one out of step.
    void reset() { by_slot_.clear(); }

private:
    RedisAddress address_;
    std::map<int, Connection> by_slot_;
};

}  // namespace rowpump::redis
