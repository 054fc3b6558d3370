// The index a grouped claim reads each key through, from information_schema.

#include "mysql/key_index.hpp"

#include <cppconn/connection.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>

#include <memory>

#include "rowpump/dispatcher/sql/sql.hpp"

namespace rowpump {

std::string find_key_index(sql::Connection& conn, const QueueConfig& queue) {
    if (queue.group_by.empty()) return "";
    const std::string second = queue.order_by.empty() ? "" : queue.order_by.front().column;
    // Indexes that start with the key column, the one whose second column is the order_by
    // column first, then by name (the same one every time).
    std::unique_ptr<sql::PreparedStatement> stmt(conn.prepareStatement(
        "SELECT s1.INDEX_NAME FROM information_schema.STATISTICS AS s1\n"
        "LEFT JOIN information_schema.STATISTICS AS s2 ON s2.TABLE_SCHEMA = s1.TABLE_SCHEMA\n"
        "  AND s2.TABLE_NAME = s1.TABLE_NAME AND s2.INDEX_NAME = s1.INDEX_NAME\n"
        "  AND s2.SEQ_IN_INDEX = 2\n"
        "WHERE s1.TABLE_SCHEMA = DATABASE() AND s1.TABLE_NAME = ? AND s1.SEQ_IN_INDEX = 1\n"
        "  AND s1.COLUMN_NAME = ?\n"
        "ORDER BY COALESCE(s2.COLUMN_NAME = ?, 0) DESC, s1.INDEX_NAME LIMIT 1"));
    stmt->setString(1, queue.table);
    stmt->setString(2, queue.group_by);
    stmt->setString(3, second);
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
    if (!rs->next()) return "";
    // The name goes into the statement's text: only a plain identifier (else the optimizer
    // chooses, as without one).
    std::string name = rs->getString(1);
    return is_plain_identifier(name) ? name : "";
}

}  // namespace rowpump
