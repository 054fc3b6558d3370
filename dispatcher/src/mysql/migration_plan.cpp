#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <mysql_connection.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <set>

#include "rowpump/dispatcher/mysql/migration.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/server_dialect.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

namespace {

std::unique_ptr<sql::ResultSet> query(sql::Connection& conn, const std::string& statement,
                                      const std::vector<std::string>& params) {
    return std::unique_ptr<sql::ResultSet>(prepare_bound(conn, statement, params)->executeQuery());
}

std::set<std::string> names(sql::Connection& conn, const std::string& statement,
                            const std::string& database, const std::string& table) {
    std::set<std::string> found;
    for (auto rs = query(conn, statement, {database, table}); rs->next();)
        found.insert(rs->getString(1));
    return found;
}

std::string megabytes(std::int64_t bytes) {
    return std::to_string((bytes + (1 << 19)) >> 20) + " MB";
}

// 5000000 -> "5,000,000"
std::string thousands(std::int64_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

// `text` as SQL comment lines of at most ~96 characters.
std::string comment(const std::string& text) {
    std::string out, line = "--   ";
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(start, end - start);
        if (line.size() + word.size() > 96 && line.size() > 5) {
            out += line + "\n";
            line = "--   ";
        }
        line += (line.size() > 5 ? " " : "") + word;
        start = end + 1;
    }
    return out + line + "\n";
}

// The table's size, and which of `columns` and the lease index it already has: those are
// taken out of the plan (MySQL has no IF NOT EXISTS for them).
void look_at_table(sql::Connection& conn, const Config& config, const QueueConfig& queue,
                   MigrationPlan& plan, std::vector<ColumnDefinition>& columns,
                   bool& index_needed) {
    const auto& db = config.mysql.database;
    auto rs = query(conn,
                    "SELECT TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES "
                    "WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                    {db, queue.table});
    if (rs->next()) {
        plan.rows = rs->getInt64(1);
        plan.data_bytes = rs->getInt64(2);
        plan.index_bytes = rs->getInt64(3);
    }
    const auto present = names(conn,
                               "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE "
                               "TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                               db, queue.table);
    columns.erase(std::remove_if(columns.begin(), columns.end(),
                                 [&](const auto& c) { return present.count(c.name) > 0; }),
                  columns.end());
    const auto indexes = names(conn,
                               "SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE "
                               "TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                               db, queue.table);
    index_needed = indexes.count(queue.columns.lease_index) == 0;
}

}  // namespace

MigrationPlan plan_migration(sql::Connection* conn, const Config& config,
                             const QueueConfig& queue) {
    const QueueSql sql(queue);
    MigrationPlan plan;
    plan.queue = queue.name;
    plan.table = queue.table;
    plan.dialect = conn != nullptr ? server_dialect(*conn) : Dialect::mariadb();
    auto columns = sql.bookkeeping_columns();
    bool index_needed = true;
    if (conn != nullptr) look_at_table(*conn, config, queue, plan, columns, index_needed);
    const auto& dialect = *plan.dialect;
    plan.steps.push_back(
        {"add the bookkeeping columns",
         columns.empty() ? std::string() : dialect.add_columns(queue.table, columns),
         dialect.columns_algorithm() +
             ": changes the table's metadata only, no copy and no rebuild, "
             "whatever its size. It needs the table's metadata lock for a moment: it waits "
             "(at most --lock-wait) for transactions that have used the table to end, and "
             "new statements on the table queue behind it meanwhile.",
         !columns.empty()});
    plan.steps.push_back(
        {"add the lease index", sql.add_lease_index(dialect),
         dialect.index_algorithm() +
             ": builds the index in place, reading every row, "
             "while reads and writes go on (changes made meanwhile are logged and applied at "
             "the end). It takes the metadata lock briefly at the start and at the end, with "
             "the same wait as above.",
         index_needed});
    if (conn == nullptr)
        plan.server = "unknown (MySQL was not reached): MariaDB's statements";
    else
        plan.server = dialect.name();
    return plan;
}

void print_plan(const MigrationPlan& plan, std::ostream& out) {
    out << "-- queue " << plan.queue << ": table " << plan.table;
    if (plan.rows) {
        out << ", ~" << thousands(*plan.rows) << " rows, " << megabytes(*plan.data_bytes)
            << " of data, " << megabytes(*plan.index_bytes) << " of indexes";
    } else {
        out << " (size unknown: MySQL was not reached)";
    }
    out << "\n";
    out << "-- server: " << plan.server << "\n";
    int number = 0;
    for (const auto& step : plan.steps) {
        out << "-- " << ++number << ". " << step.what;
        if (!step.needed) {
            out << ": already done, skipped\n";
            continue;
        }
        out << ":\n" << comment(step.effect) << step.statement << ";\n";
    }
}

}  // namespace rowpump
