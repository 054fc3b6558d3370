#pragma once

// One MySQL connection per server, opened when first needed: for the readers that visit every
// shard of a queue (the observer, `rowpump status`) where one connection no longer reaches all
// the rows.

#include <memory>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/sql/dialect.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump {

class MysqlServers {
public:
    MysqlServers();
    ~MysqlServers();
    MysqlServers(const MysqlServers&) = delete;
    MysqlServers& operator=(const MysqlServers&) = delete;

    // The connection to `server`, connecting when there is none (and asking the server's
    // dialect then: an unsupported server is refused there). Throws sql::SQLException.
    sql::Connection& at(const MysqlConfig& server);
    // The dialect of `server`, connecting as at() does.
    const Dialect& dialect(const MysqlConfig& server);
    // Drops every connection (after a connection error), so the next use reconnects.
    void reset() noexcept;

private:
    struct Open {
        MysqlConfig server;
        std::unique_ptr<sql::Connection> conn;
        Dialect dialect;
    };
    Open& open(const MysqlConfig& server);

    std::vector<Open> open_;
};

}  // namespace rowpump
