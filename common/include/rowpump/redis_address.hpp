#pragma once

// Where Redis is and how to log in: the dispatcher's `redis:` config section and the worker
// SDK's options share it.

#include <chrono>
#include <string>

namespace rowpump {

struct RedisAddress {
    std::string host = "127.0.0.1";
    int port = 6379;
    std::string user;      // ACL user; empty for the default user
    std::string password;  // empty: no AUTH
    std::chrono::milliseconds connect_timeout{2000};
};

}  // namespace rowpump
