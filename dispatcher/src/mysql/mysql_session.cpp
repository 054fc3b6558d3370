#include "rowpump/dispatcher/mysql/mysql_session.hpp"

#include <cppconn/prepared_statement.h>
#include <mysql_connection.h>

#include "rowpump/dispatcher/mysql/mysql_connect.hpp"

namespace rowpump {

MysqlSession::MysqlSession(const Config& config, const QueueConfig& queue)
    : queue_(queue), sql_(queue), conn_(connect_mysql(config.mysql)) {}

MysqlSession::~MysqlSession() = default;

std::unique_ptr<sql::PreparedStatement> MysqlSession::prepare(const std::string& statement) {
    return std::unique_ptr<sql::PreparedStatement>(conn_->prepareStatement(statement));
}

}  // namespace rowpump
