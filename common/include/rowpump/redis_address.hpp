#pragma once

// Where Redis is and how to log in: the dispatcher's `redis:` config section and the worker
// SDK's options share it. One of three shapes: a single server (host, port), a Sentinel
// group (sentinels + master: the server is whichever the sentinels name master), or a
// Cluster (cluster: seed nodes; a queue's keys live on the master that owns their slot).

#include <chrono>
#include <string>
#include <vector>

namespace rowpump {

struct RedisEndpoint {
    std::string host;
    int port = 0;
};

struct RedisAddress {
    std::string host = "127.0.0.1";
    int port = 6379;
    std::vector<RedisEndpoint> sentinels;  // Sentinel: asked in order for `master`'s address
    std::string master;                    // Sentinel: the master's name in the sentinels
    std::vector<RedisEndpoint> cluster;    // Cluster: nodes asked in order for the slot map
    std::string user;                      // ACL user; empty for the default user
    std::string password;                  // empty: no AUTH (never sent to sentinels)
    std::chrono::milliseconds connect_timeout{2000};
};

}  // namespace rowpump
