#include "rowpump/dispatcher/mysql/statement_check.hpp"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <mysql_connection.h>

#include <memory>
#include <utility>

#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"
#include "rowpump/dispatcher/mysql/server_dialect.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

namespace {

struct Statement {
    std::string key;   // the config key whose SQL is in it, under the queue
    std::string name;  // for the message
    std::string text;
};

// Grouped by the key they are blamed on, the one whose text is in them first: a due that
// MySQL refuses makes every claim fail, and naming it once is enough.
std::vector<Statement> statements_of(const QueueConfig& queue, const Dialect& dialect) {
    const QueueSql sql(queue);
    const std::string table = quote_identifier(queue.table);
    std::vector<Statement> out{
        {"due", "due condition",
         "SELECT 1 FROM " + table + " WHERE (" + queue.due.text + ") LIMIT 0"}};
    if (!queue.order_by.empty()) {
        out.push_back({"order_by", "order_by",
                       "SELECT 1 FROM " + table + " ORDER BY " + format_order_by(queue.order_by) +
                           " LIMIT 0"});
    }
    if (!queue.payload.empty()) {
        std::string columns;
        for (const auto& column : queue.payload)
            columns += (columns.empty() ? "" : ", ") + quote_identifier(column);
        out.push_back(
            {"payload", "payload columns", "SELECT " + columns + " FROM " + table + " LIMIT 0"});
    }
    const DueCountConfig due_count;
    for (const auto& claim :
         {sql.claim_plan(), sql.claim(), sql.claim_expired(), sql.claim_from(), sql.passed_over(),
          sql.read_back(), sql.expiring(), sql.count_due(due_count.cap, due_count.timeout, dialect),
          sql.scan(), sql.scan_from(), sql.lock_scanned(1), sql.scan_retried()}) {
        if (!claim.empty()) out.push_back({"due", "claim statement", claim});
    }
    out.push_back({"on_success", "success outcome statement", sql.success(1)});
    out.push_back({"on_dead", "dead outcome statement", sql.dead(1)});
    for (const auto& [name, text] :
         {std::pair<std::string, std::string>{"retry outcome statement", sql.retry(1)},
          {"extend outcome statement", sql.extend(1)},
          {"release statement", sql.release()},
          {"settle statement", sql.settled(1)},
          {"row lock statement", sql.lock_rows(1)},
          {"dead-row listing", sql.list_dead()},
          {"dead-row discard statement", sql.discard_ids(1, false)}}) {
        out.push_back({"columns", name, text});
    }
    const auto revive = sql.revive(1, std::nullopt);
    for (const auto& text : {revive.reset, revive.count, revive.not_due, revive.finish})
        out.push_back({"due", "revive statement", text});
    return out;
}

}  // namespace

std::vector<std::string> prepare_queue_statements(sql::Connection& conn, const Config& config,
                                                  const QueueConfig& queue) {
    std::vector<std::string> problems;
    std::vector<std::string> blamed;
    for (const auto& statement : statements_of(queue, server_dialect(conn))) {
        bool already = false;
        for (const auto& key : blamed) already = already || key == statement.key;
        if (already) continue;
        try {
            std::unique_ptr<sql::PreparedStatement> prepared(conn.prepareStatement(statement.text));
        } catch (const sql::SQLException& e) {
            if (is_connection_error(e)) throw;
            blamed.push_back(statement.key);
            // The claims read the payload columns: one it lacks is named once, as the payload's.
            if (statement.key == "payload") blamed.push_back("due");
            problems.push_back(config.where(queue, statement.key) + ": MySQL refuses the " +
                               statement.name + ": " + describe(e));
        }
    }
    return problems;
}

std::vector<std::string> prepare_all_statements(const Config& config, std::string& unreachable) {
    std::vector<std::string> problems;
    for (const auto& server : configs_by_server(config)) {
        try {
            auto conn = connect_mysql(server.mysql);
            for (const auto& queue : server.queues) {
                for (auto& problem : prepare_queue_statements(*conn, server, queue)) {
                    problems.push_back(std::move(problem));
                }
            }
        } catch (const sql::SQLException& e) {
            if (e.getErrorCode() == kUnsupportedServerError) {
                problems.push_back(server.mysql.host + ":" + std::to_string(server.mysql.port) +
                                   ": " + describe(e));
                continue;
            }
            if (!unreachable.empty()) unreachable += "; ";
            unreachable +=
                server.mysql.host + ":" + std::to_string(server.mysql.port) + ": " + describe(e);
        }
    }
    return problems;
}

}  // namespace rowpump
