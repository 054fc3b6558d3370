#pragma once

// rowpump YAML configs for tests, written from a few settings.

#include <cstdint>
#include <string>
#include <vector>

#include "rowpump/redis_address.hpp"

namespace rowpump::testing {

class MariaDb;
class RedisServer;

struct QueueSpec {
    std::string name = "users";
    std::string table = "user_block_status";
    std::string id = "user_id";
    std::string due = "updated_time < NOW(3) - INTERVAL 10 SECOND";
    std::string order_by = "updated_time";
    int batch = 1000;
    std::string lease = "60s";
    std::int64_t max_backlog = 200000;
    std::string rate;  // empty: no rate limit
    std::string on_success = "status = :status, updated_time = NOW(3)";
    std::string on_dead;  // empty: none
    std::string poll_min = "10ms";
    std::string poll_max = "100ms";
    std::string claim;                     // "mysql" (also when empty), "redis"; "default": no key
    std::vector<std::string> extra_lines;  // more "key: value" lines for this queue, verbatim
};

struct ConfigSpec {
    std::string mysql_host = "127.0.0.1";
    int mysql_port = 3306;
    std::string redis_host = "127.0.0.1";
    int redis_port = 6379;
    std::string redis_user;      // empty: the default user
    std::string redis_password;  // empty: none
    // Instead of redis_host and redis_port: sentinels and master, or cluster (redis_lines_for).
    std::vector<std::string> redis_lines;
    std::string database;
    std::string user;
    std::string password;
    std::vector<std::string> mysql_lines;  // more `mysql:` lines (tls: ...), verbatim
    std::string log_level = "debug";
    std::vector<std::string> extra_lines;  // more top-level YAML lines (http:, ...), verbatim
    std::vector<QueueSpec> queues;
};

// Settings for the given servers, logging in as MariaDb::kUser.
ConfigSpec config_for(const MariaDb& mysql, const RedisServer& redis, const std::string& database,
                      std::vector<QueueSpec> queues = {QueueSpec{}});

std::string render_config(const ConfigSpec& spec);
// Writes the config to `path` and returns `path`.
std::string write_config(const std::string& path, const ConfigSpec& spec);

// The `redis:` lines naming a Sentinel group's or a Cluster's nodes (for ConfigSpec).
std::vector<std::string> redis_lines_for(const RedisAddress& address);

// A YAML double-quoted scalar.
std::string yaml_quote(const std::string& text);

}  // namespace rowpump::testing
