#pragma once

// MySQL connections for the benchmark programs, set up the way the dispatcher sets up its
// own (autocommit, READ COMMITTED, utf8mb4), so baselines and rowpump run on equal terms.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/server_env.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump::bench {

// Every thread that talks to MySQL holds one of these for its lifetime.
class MysqlThread {
public:
    MysqlThread();
    ~MysqlThread();
    MysqlThread(const MysqlThread&) = delete;
    MysqlThread& operator=(const MysqlThread&) = delete;
};

std::unique_ptr<sql::Connection> connect_mysql(const ServerEnv& env);

void exec(sql::Connection& conn, const std::string& statement);
// First column of the first row; 0 for NULL or no row.
std::int64_t query_int(sql::Connection& conn, const std::string& query);
// First column of every row.
std::vector<std::int64_t> query_ints(sql::Connection& conn, const std::string& query);

}  // namespace rowpump::bench
