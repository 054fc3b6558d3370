#pragma once

// Where the throwaway servers of a benchmark run are: read from the ROWPUMP_* variables that
// scripts/servers.sh writes to RUN_DIR/env (scripts/bench.sh exports them).

#include <sys/types.h>

#include <string>

#include "rowpump/testing/mysql_client.hpp"

namespace rowpump::testing {

struct ServerEnv {
    MysqlLogin mysql;
    pid_t mysql_pid = 0;  // 0: unknown (no server CPU figures)
    std::string redis_host = "127.0.0.1";
    int redis_port = 6379;
    pid_t redis_pid = 0;
};

// Throws std::runtime_error naming the first missing variable.
ServerEnv server_env_from_environment();

}  // namespace rowpump::testing
