#include "mysql/id_key.hpp"

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <mysql_connection.h>

#include <memory>

namespace rowpump {

std::string id_key_problem(sql::Connection& conn, const Config& config, const QueueConfig& queue) {
    // A unique index of the id column alone (a longer one is unique only with its other
    // columns), over the whole value (not a prefix), on a column that refuses NULL (a unique
    // index lets several rows hold NULL).
    std::unique_ptr<sql::PreparedStatement> stmt(conn.prepareStatement(
        "SELECT COUNT(*) FROM information_schema.STATISTICS AS s\n"
        "JOIN information_schema.COLUMNS AS c ON c.TABLE_SCHEMA = s.TABLE_SCHEMA\n"
        "  AND c.TABLE_NAME = s.TABLE_NAME AND c.COLUMN_NAME = s.COLUMN_NAME\n"
        "WHERE s.TABLE_SCHEMA = ? AND s.TABLE_NAME = ? AND LOWER(s.COLUMN_NAME) = LOWER(?)\n"
        "  AND s.NON_UNIQUE = 0 AND s.SUB_PART IS NULL AND c.IS_NULLABLE = 'NO'\n"
        "  AND NOT EXISTS (SELECT 1 FROM information_schema.STATISTICS AS o\n"
        "    WHERE o.TABLE_SCHEMA = s.TABLE_SCHEMA AND o.TABLE_NAME = s.TABLE_NAME\n"
        "      AND o.INDEX_NAME = s.INDEX_NAME AND o.SEQ_IN_INDEX > 1)"));
    stmt->setString(1, config.mysql.database);
    stmt->setString(2, queue.table);
    stmt->setString(3, queue.id);
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
    if (rs->next() && rs->getInt64(1) > 0) return "";
    return config.where(queue, "id") + ": column '" + queue.id +
           "' is not the primary key or a unique NOT NULL key of table '" + queue.table +
           "': an outcome changes every row with its id; name such a key, or add one "
           "(ALTER TABLE ... ADD UNIQUE KEY (" +
           queue.id + ") with the column NOT NULL)";
}

}  // namespace rowpump
