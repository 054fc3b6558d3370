#pragma once

// One MySQL connection per server, opened when first needed: for the readers that visit every
// shard of a queue (the observer, `rowpump status`) where one connection no longer reaches all
// the rows.

#include <memory>
#include <utility>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"

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

    // The connection to `server`, connecting when there is none. Throws sql::SQLException.
    sql::Connection& at(const MysqlConfig& server);
    // Drops every connection (after a connection error), so the next use reconnects.
    void reset() noexcept;

private:
    std::vector<std::pair<MysqlConfig, std::unique_ptr<sql::Connection>>> open_;
};

}  // namespace rowpump
