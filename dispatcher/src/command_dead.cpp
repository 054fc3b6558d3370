#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <memory>
#include <ostream>

#include "rowpump/dispatcher/commands.hpp"
#include "rowpump/dispatcher/mysql_session.hpp"
#include "rowpump/dispatcher/queue_sql.hpp"

namespace rowpump {

namespace {

const QueueConfig* find_or_complain(const Config& config, const std::string& name, std::ostream& err) {
    if (const auto* queue = config.find_queue(name)) return queue;
    std::string known;
    for (const auto& q : config.queues) known += (known.empty() ? "" : ", ") + q.name;
    err << "unknown queue '" << name << "' (" << config.file << " configures: " << known << ")\n";
    return nullptr;
}

}  // namespace

int command_dead(const Config& config, const std::string& queue_name, int limit, std::ostream& out,
                 std::ostream& err) {
    const auto* queue = find_or_complain(config, queue_name, err);
    if (queue == nullptr) return 1;
    try {
        auto conn = connect_mysql(config.mysql);
        std::unique_ptr<sql::PreparedStatement> stmt(conn->prepareStatement(QueueSql(*queue).list_dead()));
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

int command_retry(const Config& config, const std::string& queue_name, const std::vector<std::string>& ids,
                  bool all, std::ostream& out, std::ostream& err) {
    const auto* queue = find_or_complain(config, queue_name, err);
    if (queue == nullptr) return 1;
    if (all == !ids.empty()) {
        err << "give either ids or --all\n";
        return 1;
    }
    try {
        auto conn = connect_mysql(config.mysql);
        const QueueSql sql(*queue);
        std::unique_ptr<sql::PreparedStatement> stmt(
            conn->prepareStatement(all ? sql.revive_all() : sql.revive_ids(ids.size())));
        for (std::size_t i = 0; i < ids.size(); ++i) stmt->setString(static_cast<unsigned>(i + 1), ids[i]);
        const auto revived = stmt->executeUpdate();
        out << "queue " << queue->name << ": " << revived << " dead row(s) are due again\n";
        if (!all && revived < static_cast<int>(ids.size())) {
            err << "queue " << queue->name << ": " << ids.size() - static_cast<std::size_t>(revived)
                << " of the given ids are not dead rows\n";
            return 1;
        }
    } catch (const sql::SQLException& e) {
        err << "mysql: " << describe(e) << "\n";
        return 1;
    }
    return 0;
}

}  // namespace rowpump
