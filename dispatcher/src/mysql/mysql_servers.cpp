#include "mysql/mysql_servers.hpp"

#include <mysql_connection.h>

#include <algorithm>

#include "rowpump/dispatcher/mysql/mysql_connect.hpp"

namespace rowpump {

MysqlServers::MysqlServers() = default;
MysqlServers::~MysqlServers() = default;

sql::Connection& MysqlServers::at(const MysqlConfig& server) {
    auto it = std::find_if(open_.begin(), open_.end(),
                           [&](const auto& entry) { return same_server(entry.first, server); });
    if (it != open_.end()) return *it->second;
    auto conn = connect_mysql(server);
    open_.emplace_back(server, std::move(conn));
    return *open_.back().second;
}

void MysqlServers::reset() noexcept {
    open_.clear();
}

}  // namespace rowpump
