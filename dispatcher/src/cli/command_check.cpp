#include "mysql/column_types.hpp"
#include "mysql/id_key.hpp"
#include "mysql/mysql_tls.hpp"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <memory>
#include <ostream>
#include <set>

#include "rowpump/common/duration.hpp"
#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/redis/redis_connections.hpp"
#include "rowpump/common/redis/redis_route.hpp"
#include "rowpump/dispatcher/cli/commands.hpp"
#include "rowpump/dispatcher/loop/claim_path.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"
#include "rowpump/dispatcher/mysql/server_dialect.hpp"
#include "rowpump/dispatcher/mysql/statement_check.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

namespace {

std::set<std::string> table_columns(sql::Connection& conn, const std::string& database,
                                    const std::string& table) {
    std::unique_ptr<sql::PreparedStatement> stmt(
        conn.prepareStatement("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE "
                              "TABLE_SCHEMA = ? AND TABLE_NAME = ?"));
    stmt->setString(1, database);
    stmt->setString(2, table);
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
    std::set<std::string> columns;
    while (rs->next()) columns.insert(rs->getString(1));
    return columns;
}

bool has_leading_index(sql::Connection& conn, const std::string& database, const std::string& table,
                       const std::string& column) {
    std::unique_ptr<sql::PreparedStatement> stmt(
        conn.prepareStatement("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE "
                              "TABLE_SCHEMA = ? AND TABLE_NAME = ? "
                              "AND COLUMN_NAME = ? AND SEQ_IN_INDEX = 1"));
    stmt->setString(1, database);
    stmt->setString(2, table);
    stmt->setString(3, column);
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
    return rs->next() && rs->getInt64(1) > 0;
}

// Problems with one queue's table, or "" if none.
std::string check_table(sql::Connection& conn, const Config& config, const QueueConfig& queue) {
    const auto columns = table_columns(conn, config.mysql.database, queue.table);
    if (columns.empty())
        return "table '" + queue.table + "' does not exist in database '" + config.mysql.database +
               "'";
    std::string problems;
    const auto& c = queue.columns;
    for (const auto& name : {queue.id, c.token, c.lease, c.attempts, c.error, c.dead}) {
        if (columns.count(name) == 0) problems += "column '" + name + "' is missing; ";
    }
    if (columns.count(c.lease) &&
        !has_leading_index(conn, config.mysql.database, queue.table, c.lease)) {
        problems += "no index starts with the column '" + c.lease + "'; ";
    }
    if (!problems.empty()) problems += "run `rowpump migrate -c " + config.file + " --apply`";
    return problems;
}

// A warning when the claimable-row scan reads the whole table, or "".
std::string check_scan(sql::Connection& conn, const QueueSql& sql, const QueueConfig& queue) {
    std::unique_ptr<sql::Statement> stmt(conn.createStatement());
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery(sql.explain_due()));
    while (rs->next()) {
        if (rs->getString("type") == "ALL") {
            return "the due scan reads the whole table (EXPLAIN: type ALL over ~" +
                   rs->getString("rows") + " rows); add an index that serves the due condition" +
                   (queue.order_by.empty() ? std::string() : " and order_by");
        }
    }
    return "";
}

// With group_by: the key column and the per-key limits, as `check` prints them.
std::string group_limits_line(const QueueConfig& queue) {
    std::string line = "group_by " + queue.group_by + ": rate_per_key ";
    line += queue.rate_per_key
                ? std::to_string(queue.rate_per_key->count) + "/" +
                      format_duration(queue.rate_per_key->per) + " (on the Redis clock)"
                : std::string("none");
    line += ", concurrency_per_key ";
    line += queue.concurrency_per_key > 0 ? std::to_string(queue.concurrency_per_key) : "none";
    line += ", weight 1; overrides for named keys: `rowpump limit list " + queue.name + "`";
    return line;
}

// With group_by: a warning when no index starts with the key column, or "". Listing the keys
// is a loose scan of such an index (an index dive per key) and each key's share is read
// through it; without one, both read the whole table (docs/fairness.md).
std::string check_group_index(sql::Connection& conn, const Config& config,
                              const QueueConfig& queue) {
    if (queue.group_by.empty() ||
        has_leading_index(conn, config.mysql.database, queue.table, queue.group_by))
        return "";
    std::string columns = quote_identifier(queue.group_by);
    if (!queue.order_by.empty()) columns += ", " + quote_identifier(queue.order_by.front().column);
    return "no index starts with the group_by column '" + queue.group_by +
           "': every claim would read the whole table; add one, e.g. ALTER TABLE " +
           quote_identifier(queue.table) + " ADD INDEX (" + columns + ")";
}

// Whether the session is encrypted: "TLS TLS_AES_256_GCM_SHA384 (mysql.tls.mode: required)".
std::string encryption_line(sql::Connection& conn, const MysqlTls& tls) {
    const std::string cipher = tls_cipher(conn);
    const std::string mode = std::string("(mysql.tls.mode: ") + tls_mode_name(tls.mode) + ")";
    return cipher.empty() ? "not encrypted " + mode : "TLS " + cipher + " " + mode;
}

// The queues (or shards of queues) whose table is on `config.mysql`.
void check_server(const Config& config, std::ostream& out, std::ostream& err, int& problems,
                  int& warnings) {
    try {
        auto conn = connect_mysql(config.mysql);
        const auto dialect = server_dialect(*conn);
        out << "mysql " << config.mysql.host << ":" << config.mysql.port << "/"
            << config.mysql.database << ": ok (" << dialect.name() << "); "
            << encryption_line(*conn, config.mysql.tls) << "\n";
        for (const auto& queue : config.queues) {
            const QueueSql sql(queue, payload_kinds(*conn, config.mysql.database, queue));
            if (auto problem = check_table(*conn, config, queue); !problem.empty()) {
                err << "queue " << queue.label() << ": " << problem << "\n";
                ++problems;
                continue;
            }
            // Preparing checks the operator's SQL against the table without running it.
            auto queue_problems = column_type_problems(*conn, config, queue);
            if (auto problem = id_key_problem(*conn, config, queue); !problem.empty())
                queue_problems.push_back(std::move(problem));
            const auto payload = payload_problems(*conn, config, queue);
            queue_problems.insert(queue_problems.end(), payload.errors.begin(),
                                  payload.errors.end());
            if (payload.errors.empty()) {
                for (auto& problem : prepare_queue_statements(*conn, config, queue)) {
                    queue_problems.push_back(std::move(problem));
                }
            }
            for (const auto& problem : queue_problems) err << problem << "\n";
            if (!queue_problems.empty()) {
                ++problems;
                continue;
            }
            // Which claim mode the queue uses, and why one would pick the other (docs/semantics.md,
            // "Claims in MySQL or in Redis").
            const auto path = make_claim_path(queue);
            out << "queue " << queue.label() << ": ok; " << path->describe() << "\n";
            if (!queue.group_by.empty()) out << group_limits_line(queue) << "\n";
            out << "claim statements:\n";
            for (const auto& statement : path->statements(sql)) out << statement << ";\n";
            for (const auto& warning : payload.warnings) {
                err << "queue " << queue.label() << ": warning: " << warning << "\n";
                ++warnings;
            }
            if (auto warning = check_scan(*conn, sql, queue); !warning.empty()) {
                err << "queue " << queue.label() << ": warning: " << warning << "\n";
                ++warnings;
            }
            if (auto warning = check_group_index(*conn, config, queue); !warning.empty()) {
                err << "queue " << queue.label() << ": warning: " << warning << "\n";
                ++warnings;
            }
        }
    } catch (const sql::SQLException& e) {
        err << "mysql " << config.mysql.host << ":" << config.mysql.port << ": " << describe(e)
            << "\n";
        ++problems;
    }
}

}  // namespace

int command_check(const Config& config, bool strict, std::ostream& out, std::ostream& err) {
    out << "config " << config.file << ": ok (" << config.queues.size() << " queue(s))\n";
    int problems = 0, warnings = 0;
    try {
        // Each queue's node: with Cluster they may differ.
        redis::Connections nodes(config.redis);
        for (const auto& queue : config.queues)
            nodes.for_key(protocol::keys_for(queue.name).prefix).command({"PING"});
        out << "redis " << redis::describe(config.redis) << ": ok\n";
    } catch (const std::exception& e) {
        err << "redis " << redis::describe(config.redis) << ": " << e.what() << "\n";
        ++problems;
    }
    for (const auto& server : configs_by_server(config))
        check_server(server, out, err, problems, warnings);
    return problems > 0 || (strict && warnings > 0) ? 1 : 0;
}

}  // namespace rowpump
