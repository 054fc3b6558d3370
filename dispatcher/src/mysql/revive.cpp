#include "mysql/revive.hpp"

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <memory>

#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

namespace {

// Runs the revive steps up to, not including, clearing the dead mark.
Revived reset_and_count(sql::Connection& conn, const QueueSql::Revive& sql,
                        const std::vector<std::string>& ids) {
    prepare_bound(conn, sql.reset, ids)->executeUpdate();
    Revived r;
    std::unique_ptr<sql::ResultSet> counts(prepare_bound(conn, sql.count, ids)->executeQuery());
    if (counts->next()) {
        r.rows = counts->getInt64(1);
        r.not_due = counts->getInt64(2);
    }
    if (r.not_due == 0) return r;
    std::unique_ptr<sql::ResultSet> rs(prepare_bound(conn, sql.not_due, ids)->executeQuery());
    while (rs->next()) r.not_due_ids += (r.not_due_ids.empty() ? "" : ", ") + rs->getString(1);
    if (r.not_due > QueueSql::Revive::kShownNotDue) r.not_due_ids += ", ...";
    return r;
}

}  // namespace

Revived revive_dead_rows(const Config& config, const QueueConfig& queue,
                         const std::vector<std::string>& ids,
                         const std::optional<SqlFragment>& set) {
    auto conn = connect_mysql(config.mysql);
    const auto sql = QueueSql(queue).revive(ids.size(), set);
    std::unique_ptr<sql::Statement> tx(conn->createStatement());
    tx->execute("START TRANSACTION");
    const Revived revived = reset_and_count(*conn, sql, ids);
    if (!revived.committed()) {
        tx->execute("ROLLBACK");
        return revived;
    }
    prepare_bound(*conn, sql.finish, ids)->executeUpdate();
    tx->execute("COMMIT");
    return revived;
}

std::string explain_not_due(const QueueConfig& queue, const Revived& r, bool with_set) {
    std::string text = "nothing changed: " + std::to_string(r.not_due) + " of the " +
                       std::to_string(r.rows) + " dead row(s) would not be due after the retry (" +
                       r.not_due_ids + "): the queue's due condition (" + queue.due.text +
                       ") is false for them";
    if (with_set) {
        text += ", even after --set.\n";
    } else if (queue.on_dead) {
        text += ", most likely because on_dead (" + queue.on_dead->text +
                ") changed a column it reads.\n";
    } else {
        text += ".\n";
    }
    return text +
           "Give --set \"column = value, ...\" to make them due with the retry (for example the "
           "values they had before on_dead), or change them yourself and run the retry again.\n";
}

}  // namespace rowpump
