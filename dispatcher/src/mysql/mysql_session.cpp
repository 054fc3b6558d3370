#include "rowpump/dispatcher/mysql/mysql_session.hpp"

#include <cppconn/prepared_statement.h>
#include <mysql_connection.h>

#include "mysql/column_types.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"

namespace rowpump {

MysqlSession::MysqlSession(const Config& config, const QueueConfig& queue)
    : queue_(queue),
      conn_(connect_mysql(config.mysql)),
      sql_(queue, payload_kinds(*conn_, config.mysql.database, queue)) {}

MysqlSession::~MysqlSession() = default;

std::unique_ptr<sql::PreparedStatement> MysqlSession::prepare(const std::string& statement) {
    return std::unique_ptr<sql::PreparedStatement>(conn_->prepareStatement(statement));
}

}  // namespace rowpump
