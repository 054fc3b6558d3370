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
    std::int64_t octets = 0;  // longest value in bytes, for string and binary types
};

std::map<std::string, ColumnType> column_types(sql::Connection& conn, const std::string& database,
                                               const std::string& table) {
    std::unique_ptr<sql::PreparedStatement> stmt(conn.prepareStatement(
        "SELECT LOWER(COLUMN_NAME), LOWER(DATA_TYPE), COALESCE(CHARACTER_MAXIMUM_LENGTH, 0), "
        "COALESCE(DATETIME_PRECISION, 0), COALESCE(CHARACTER_SET_NAME, ''), COLUMN_TYPE, "
        "COALESCE(CHARACTER_OCTET_LENGTH, 0) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
        "? AND TABLE_NAME = ?"));
    stmt->setString(1, database);
    stmt->setString(2, table);
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
    std::map<std::string, ColumnType> out;
    while (rs->next()) {
        out[rs->getString(1)] = {rs->getString(2), rs->getInt64(3),  rs->getInt64(4),
                                 rs->getString(5), rs->getString(6), rs->getInt64(7)};
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

std::string lower(std::string text) {
    for (auto& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return text;
}

// The most bytes `c`'s field can take in a ready message: the space before it, "name=" and the
// value percent-encoded (three bytes per byte at worst).
std::int64_t longest_field(const std::string& name, const ColumnType& c) {
    constexpr std::int64_t kShortValue = 64;  // numbers, dates, ISO 8601 times, ENUM, SET
    const std::int64_t value = c.octets > 0 ? c.octets * 3 : kShortValue;
    return static_cast<std::int64_t>(name.size()) + 2 + value;
}

}  // namespace

PayloadKinds payload_kinds(sql::Connection& conn, const std::string& database,
                           const QueueConfig& queue) {
    PayloadKinds kinds;
    if (queue.payload.empty()) return kinds;
    const auto types = column_types(conn, database, queue.table);
    for (const auto& column : queue.payload) {
        const auto it = types.find(lower(column));
        if (it == types.end()) continue;
        if (it->second.data_type == "datetime") kinds[lower(column)] = PayloadKind::datetime;
        if (it->second.data_type == "timestamp") kinds[lower(column)] = PayloadKind::timestamp;
    }
    return kinds;
}

PayloadProblems payload_problems(sql::Connection& conn, const Config& config,
                                 const QueueConfig& queue) {
    PayloadProblems problems;
    if (queue.payload.empty()) return problems;
    const auto types = column_types(conn, config.mysql.database, queue.table);
    // "<id>:<token>": the token takes at most 36 bytes; ids are taken as short (an integer, a
    // UUID), since a key of up to 3072 bytes would make every payload look too long.
    std::int64_t longest = 100;
    std::string long_columns;
    for (const auto& column : queue.payload) {
        const auto it = types.find(lower(column));
        if (it == types.end()) {
            problems.errors.push_back(config.where(queue, "payload") + ": column '" + column +
                                      "' does not exist in table '" + queue.table + "'");
            continue;
        }
        longest += longest_field(column, it->second);
        if (it->second.octets > 0) {
            long_columns +=
                (long_columns.empty() ? "" : ", ") + column + " " + it->second.column_type;
        }
    }
    if (problems.errors.empty() && longest > queue.payload_max) {
        problems.warnings.push_back(
            config.where(queue, "payload") + ": a ready message can take up to " +
            std::to_string(longest) + " bytes with these columns (" + long_columns +
            "), more than payload_max (" + std::to_string(queue.payload_max) +
            " bytes); a row whose message is longer is reported failed with a reason saying "
            "so. Raise payload_max (up to 65536) or keep long values out of the payload");
    }
    return problems;
}

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
        auto it = types.find(lower(name));
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
