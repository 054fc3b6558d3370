#include "mysql/mysql_servers.hpp"

#include <mysql_connection.h>

#include <algorithm>

#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/server_dialect.hpp"

namespace rowpump {

MysqlServers::MysqlServers() = default;
MysqlServers::~MysqlServers() = default;

MysqlServers::Open& MysqlServers::open(const MysqlConfig& server) {
    auto it = std::find_if(open_.begin(), open_.end(),
                           [&](const auto& entry) { return same_server(entry.server, server); });
    if (it != open_.end()) return *it;
    auto conn = connect_mysql(server);
    auto dialect = server_dialect(*conn);
    open_.push_back({server, std::move(conn), std::move(dialect)});
    return open_.back();
}

sql::Connection& MysqlServers::at(const MysqlConfig& server) {
    return *open(server).conn;
}

const Dialect& MysqlServers::dialect(const MysqlConfig& server) {
    return open(server).dialect;
}

void MysqlServers::reset() noexcept {
    open_.clear();
}

}  // namespace rowpump
