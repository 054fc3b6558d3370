#pragma once

// Connecting to MySQL/MariaDB through mysql-connector-c++ 1.1, with the session settings
// every rowpump connection needs. The connector's types stay out of this header so that
// only the files that talk SQL pay for its (Boost-heavy) headers.

#include <memory>
#include <string>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"

namespace sql {
class Connection;
class PreparedStatement;
}  // namespace sql

namespace rowpump {

// Every thread that uses the connector must bracket its use with this.
class MysqlThread {
public:
    MysqlThread();
    ~MysqlThread();
    MysqlThread(const MysqlThread&) = delete;
    MysqlThread& operator=(const MysqlThread&) = delete;
};

// The sql_mode of every rowpump session: MariaDB's default less NO_AUTO_CREATE_USER (which
// MySQL 8 refuses). It reads strings with backslash escapes, "..." as a string and || as OR,
// as the config's SQL fragments are checked (sql/sql.cpp), whatever the server's global mode.
inline constexpr const char* kSessionSqlMode =
    "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

// Connects with autocommit on, READ COMMITTED isolation and kSessionSqlMode, no automatic
// reconnect (a
// silently reconnected session would lose those settings and its prepared statements).
// Throws sql::SQLException.
std::unique_ptr<sql::Connection> connect_mysql(const MysqlConfig& config);

// `statement` prepared, with `params` bound as strings to its `?` in order.
std::unique_ptr<sql::PreparedStatement> prepare_bound(sql::Connection& conn,
                                                      const std::string& statement,
                                                      const std::vector<std::string>& params);

}  // namespace rowpump
