#include "mysql/column_types.hpp"

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <mysql_connection.h>

#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <utility>

#include "rowpump/common/protocol/report_rules.hpp"

namespace rowpump {

namespace {

struct ColumnType {
    std::string data_type;       // lower case: "varchar", "datetime", ...
    std::int64_t length = 0;     // characters, for string types
    std::int64_t precision = 0;  // fractional digits, for datetime
    std::string charset;
    std::string column_type;  // as SHOW CREATE TABLE writes it: "varchar(80)"
};

std::map<std::string, ColumnType> column_types(sql::Connection& conn, const std::string& database,
                                               const std::string& table) {
    std::unique_ptr<sql::PreparedStatement> stmt(conn.prepareStatement(
        "SELECT LOWER(COLUMN_NAME), LOWER(DATA_TYPE), COALESCE(CHARACTER_MAXIMUM_LENGTH, 0), "
        "COALESCE(DATETIME_PRECISION, 0), COALESCE(CHARACTER_SET_NAME, ''), COLUMN_TYPE "
        "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?"));
    stmt->setString(1, database);
    stmt->setString(2, table);
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
    std::map<std::string, ColumnType> out;
    while (rs->next()) {
        out[rs->getString(1)] = {rs->getString(2), rs->getInt64(3), rs->getInt64(4),
                                 rs->getString(5), rs->getString(6)};
    }
    return out;
}

bool one_of(const std::string& value, std::initializer_list<const char*> options) {
    for (const char* option : options) {
        if (value == option) return true;
    }
    return false;
}

// What is wrong with the column holding `role`, or "" when its type fits.
std::string type_problem(const std::string& role, const ColumnType& c) {
    if (role == "token" && (!one_of(c.data_type, {"varchar", "char"}) || c.length < 36)) {
        return "expected VARCHAR(80) CHARACTER SET ascii COLLATE ascii_bin (a claim token takes "
               "up to 36 characters)";
    }
    if (role == "lease" && (c.data_type != "datetime" || c.precision < 3)) {
        return "expected DATETIME(3) (a batch is read back by its lease end, to the "
               "millisecond)";
    }
    if (role == "attempts" && !one_of(c.data_type, {"int", "bigint"})) {
        return "expected INT UNSIGNED NOT NULL DEFAULT 0";
    }
    if (role == "error" &&
        (!one_of(c.data_type, {"varchar", "char", "text", "mediumtext", "longtext"}) ||
         c.length < static_cast<std::int64_t>(protocol::kMaxReasonBytes) ||
         c.charset != "utf8mb4")) {
        return "expected VARCHAR(1024) CHARACTER SET utf8mb4 (reasons are up to " +
               std::to_string(protocol::kMaxReasonBytes) + " bytes of any script)";
    }
    if (role == "dead" && !one_of(c.data_type, {"datetime", "timestamp"})) {
        return "expected DATETIME(3)";
    }
    return "";
}

}  // namespace

std::vector<std::string> column_type_problems(sql::Connection& conn, const Config& config,
                                              const QueueConfig& queue) {
    const auto types = column_types(conn, config.mysql.database, queue.table);
    const auto& c = queue.columns;
    std::vector<std::string> problems;
    for (const auto& [role, name] : {std::pair<std::string, std::string>{"token", c.token},
                                     {"lease", c.lease},
                                     {"attempts", c.attempts},
                                     {"error", c.error},
                                     {"dead", c.dead}}) {
        std::string lower = name;
        for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        auto it = types.find(lower);
        if (it == types.end()) continue;
        auto problem = type_problem(role, it->second);
        if (problem.empty()) continue;
        problems.push_back(config.where(queue, "columns." + role) + ": column '" + name + "' is " +
                           it->second.column_type +
                           (it->second.charset.empty() ? "" : " " + it->second.charset) + "; " +
                           problem + ", as `rowpump migrate` adds it");
    }
    return problems;
}

}  // namespace rowpump
