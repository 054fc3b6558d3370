#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <memory>
#include <ostream>

#include "queue_argument.hpp"
#include "rowpump/dispatcher/commands.hpp"
#include "rowpump/dispatcher/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql_errors.hpp"
#include "rowpump/dispatcher/queue_sql.hpp"

namespace rowpump {

int command_dead(const Config& config, const std::string& queue_name, int limit, std::ostream& out,
                 std::ostream& err) {
    const auto* queue = find_queue_or_complain(config, queue_name, err);
    if (queue == nullptr || !unsharded_or_complain(*queue, err)) return 1;
    try {
        auto conn = connect_mysql(config.mysql);
        std::unique_ptr<sql::PreparedStatement> stmt(
            conn->prepareStatement(QueueSql(*queue).list_dead()));
        stmt->setInt(1, limit);
        std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
        out << "id\tattempts\tdead_at\tlast_error\n";
        while (rs->next()) {
            out << rs->getString(1) << "\t" << rs->getInt64(2) << "\t" << rs->getString(4) << "\t"
                << (rs->isNull(3) ? std::string() : std::string(rs->getString(3))) << "\n";
        }
    } catch (const sql::SQLException& e) {
        err << "mysql: " << describe(e) << "\n";
        return 1;
    }
    return 0;
}

}  // namespace rowpump
