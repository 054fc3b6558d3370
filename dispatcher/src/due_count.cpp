#include "due_count.hpp"

#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <algorithm>
#include <memory>

#include "rowpump/dispatcher/queue_sql.hpp"

namespace rowpump {

protocol::QueueGauges count_due(sql::Connection& mysql, const QueueConfig& queue,
                                const DueCountConfig& limits) {
    std::unique_ptr<sql::Statement> stmt(mysql.createStatement());
    std::unique_ptr<sql::ResultSet> rs(
        stmt->executeQuery(QueueSql(queue).count_due(limits.cap, limits.timeout)));
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

}  // namespace rowpump
