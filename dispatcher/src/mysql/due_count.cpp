#include "mysql/due_count.hpp"

#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <algorithm>
#include <memory>

#include "mysql/mysql_servers.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

protocol::QueueGauges count_due(sql::Connection& mysql, const Dialect& dialect,
                                const QueueConfig& queue, const DueCountConfig& limits) {
    std::unique_ptr<sql::Statement> stmt(mysql.createStatement());
    std::unique_ptr<sql::ResultSet> rs(
        stmt->executeQuery(QueueSql(queue).count_due(limits.cap, limits.timeout, dialect)));
    protocol::QueueGauges g;
    g.at_ms = protocol::unix_ms();
    if (!rs->next()) return g;
    const auto counted = rs->getInt64(1);
    g.due_capped = counted > limits.cap;
    g.due = g.due_capped ? limits.cap : counted;
    if (!rs->isNull(2))
        g.oldest_due_age = Millis(std::max<std::int64_t>(0, rs->getInt64(2) / 1000));
    return g;
}

protocol::QueueGauges count_due_everywhere(MysqlServers& servers, const Config& config,
                                           const QueueConfig& queue) {
    protocol::QueueGauges sum;
    for (const auto& source : queue_sources(config, queue)) {
        const auto& server = source.config.mysql;
        const auto g =
            count_due(servers.at(server), servers.dialect(server), source.queue, config.due_count);
        sum.at_ms = g.at_ms;
        sum.due += g.due;
        sum.due_capped = sum.due_capped || g.due_capped;
        if (g.oldest_due_age && (!sum.oldest_due_age || *g.oldest_due_age > *sum.oldest_due_age))
            sum.oldest_due_age = g.oldest_due_age;
    }
    return sum;
}

}  // namespace rowpump
