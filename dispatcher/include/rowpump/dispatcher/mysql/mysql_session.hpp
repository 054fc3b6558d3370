#pragma once

// One MySQL connection of a queue's loop, with the queue's statements (QueueSql). The stores
// over it (ClaimStore, ScanStore, OutcomeStore) take it by reference, prepare their statements
// on it and must not outlive it; one thread uses it at a time. Any sql::SQLException leaves the
// session unusable: drop it with its stores and open a new one, which reconnects, re-applies
// the session settings and re-prepares.

#include <memory>
#include <string>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace sql {
class Connection;
class PreparedStatement;
}  // namespace sql

namespace rowpump {

class MysqlSession {
public:
    // Connects (connect_mysql). Throws sql::SQLException.
    MysqlSession(const Config& config, const QueueConfig& queue);
    ~MysqlSession();
    MysqlSession(const MysqlSession&) = delete;
    MysqlSession& operator=(const MysqlSession&) = delete;

    const QueueConfig& queue() const { return queue_; }
    const QueueSql& sql() const { return sql_; }
    sql::Connection& connection() { return *conn_; }
    std::unique_ptr<sql::PreparedStatement> prepare(const std::string& statement);

private:
    const QueueConfig& queue_;
    std::unique_ptr<sql::Connection> conn_;
    QueueSql sql_;  // after conn_: the payload columns' types are read through it
};

}  // namespace rowpump
