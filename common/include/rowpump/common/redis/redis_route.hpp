#pragma once

// Where the Redis that serves a key is right now, for each shape of RedisAddress: the one
// server; the master the Sentinel group names (asked again on every reconnect, so a failover
// is followed); the Cluster master owning the key's hash slot (CLUSTER SLOTS, asked again on
// every reconnect, so a resharding or a Cluster failover is followed). Asks them over
// redis::Connection, and defines Connection::connect_for, which connects there; redis.cpp
// itself knows nothing of routes.

#include <string>
#include <string_view>

#include "rowpump/common/redis/redis.hpp"
#include "rowpump/redis_address.hpp"

namespace rowpump::redis {

// What the address names, for log lines and errors: "127.0.0.1:6379", "Sentinel master
// 'jobs' via 10.0.0.1:26379, 10.0.0.2:26379", "Cluster via 10.0.0.1:7000, ...".
std::string describe(const RedisAddress& address);
// Why the address cannot be used (empty: it can). The SDK checks its options with it; the
// dispatcher's config reader makes the same checks, pointing at the line.
std::string address_problem(const RedisAddress& address);

// The node that serves `key` now. Throws IoError when nobody asked could say.
RedisEndpoint find_node(const RedisAddress& address, std::string_view key);

}  // namespace rowpump::redis
