#include "rowpump/testing/server_env.hpp"

#include <cstdlib>
#include <stdexcept>

namespace rowpump::testing {

namespace {

std::string required(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') {
        throw std::runtime_error(std::string(name) +
                                 " is not set (source the env file of scripts/servers.sh)");
    }
    return value;
}

std::string optional(const char* name, std::string fallback) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

ServerEnv server_env_from_environment() {
    ServerEnv env;
    env.mysql.host = optional("ROWPUMP_MYSQL_HOST", env.mysql.host);
    env.mysql.port = std::stoi(required("ROWPUMP_MYSQL_PORT"));
    env.mysql.user = required("ROWPUMP_MYSQL_USER");
    env.mysql.password = required("ROWPUMP_MYSQL_PASSWORD");
    env.mysql.database = required("ROWPUMP_MYSQL_DATABASE");
    env.mysql_pid = static_cast<pid_t>(std::stol(optional("ROWPUMP_MYSQL_PID", "0")));
    env.redis_host = optional("ROWPUMP_REDIS_HOST", env.redis_host);
    env.redis_port = std::stoi(required("ROWPUMP_REDIS_PORT"));
    env.redis_pid = static_cast<pid_t>(std::stol(optional("ROWPUMP_REDIS_PID", "0")));
    return env;
}

}  // namespace rowpump::testing
