#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <ostream>
#include <vector>

#include "cli/queue_argument.hpp"
#include "rowpump/common/log_text.hpp"
#include "rowpump/dispatcher/cli/commands.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

namespace {

std::string table_text(const std::string& text) {
    return log_text(text, std::numeric_limits<std::size_t>::max());
}

struct Listed {
    std::string dead_at;  // sorts as text: the server gives 'YYYY-MM-DD hh:mm:ss'
    std::string line;
};

// The newest `limit` dead rows of one source, each line led by `shard` (when not empty).
void list_source(const QueueSource& source, const std::string& shard, int limit,
                 std::vector<Listed>& rows) {
    auto conn = connect_mysql(source.config.mysql);
    std::unique_ptr<sql::PreparedStatement> stmt(
        conn->prepareStatement(QueueSql(source.queue).list_dead()));
    stmt->setInt(1, limit);
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
    while (rs->next()) {
        // Ids and errors come from outside (a worker's reason): escaped, so they cannot
        // forge rows (tab, newline) or steer the terminal (escape sequences).
        std::string line = shard.empty() ? "" : shard + "\t";
        line += table_text(rs->getString(1)) + "\t" + std::to_string(rs->getInt64(2)) + "\t" +
                rs->getString(4) + "\t" +
                (rs->isNull(3) ? std::string() : table_text(rs->getString(3))) + "\n";
        rows.push_back({rs->getString(4), std::move(line)});
    }
}

}  // namespace

int command_dead(const Config& config, const std::string& queue_name, int limit, std::ostream& out,
                 std::ostream& err) {
    const auto* queue = find_queue_or_complain(config, queue_name, err);
    if (queue == nullptr) return 1;
    std::vector<Listed> rows;
    try {
        for (const auto& source : queue_sources(config, *queue)) {
            list_source(source, source.queue.shard ? queue->shards[*source.queue.shard].name : "",
                        limit, rows);
        }
    } catch (const sql::SQLException& e) {
        err << "mysql: " << describe(e) << "\n";
        return 1;
    }
    // Newest first over all shards, as each shard lists its own.
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Listed& a, const Listed& b) { return a.dead_at > b.dead_at; });
    if (rows.size() > static_cast<std::size_t>(limit)) rows.resize(limit);
    out << (queue->shards.empty() ? "" : "shard\t") << "id\tattempts\tdead_at\tlast_error\n";
    for (const auto& row : rows) out << row.line;
    return 0;
}

}  // namespace rowpump
