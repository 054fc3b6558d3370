#include "rowpump/dispatcher/sql/dialect.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "rowpump/common/log_text.hpp"
#include "rowpump/dispatcher/sql/sql.hpp"

namespace rowpump {

namespace {

// SKIP LOCKED, which every claim uses, came with MariaDB 10.6 and MySQL 8.0.
constexpr int kMariadbMajor = 10, kMariadbMinor = 6, kMysqlMajor = 8;

// The leading "major.minor[.patch]" of `version`; false when it does not start with one.
bool leading_numbers(const std::string& version, int& major, int& minor, std::string& numbers) {
    std::size_t end = 0;
    while (end < version.size() && end < 32 &&
           (std::isdigit(static_cast<unsigned char>(version[end])) || version[end] == '.'))
        ++end;
    numbers = version.substr(0, end);
    // strtol saturates where a scanf("%d") would overflow.
    char* after_major = nullptr;
    const long m = std::strtol(numbers.c_str(), &after_major, 10);
    if (after_major == numbers.c_str() || *after_major != '.') return false;
    char* after_minor = nullptr;
    const long n = std::strtol(after_major + 1, &after_minor, 10);
    if (after_minor == after_major + 1) return false;
    major = static_cast<int>(std::min<long>(m, 1000));
    minor = static_cast<int>(std::min<long>(n, 1000));
    return true;
}

}  // namespace

Dialect Dialect::from_version(const std::string& reported) {
    // A MariaDB behind a proxy may keep the "5.5.5-" that its handshake puts first.
    const bool mariadb = reported.find("MariaDB") != std::string::npos;
    const std::string version =
        mariadb && reported.rfind("5.5.5-", 0) == 0 ? reported.substr(6) : reported;
    int major = 0, minor = 0;
    std::string numbers;
    if (!leading_numbers(version, major, minor, numbers)) {
        throw UnsupportedServer("cannot tell the server's kind from its VERSION() '" +
                                log_text(reported, 80) +
                                "'; rowpump needs MariaDB 10.6+ or MySQL 8.0+");
    }
    if (mariadb) {
        if (major < kMariadbMajor || (major == kMariadbMajor && minor < kMariadbMinor)) {
            throw UnsupportedServer("the server is MariaDB " + numbers +
                                    "; rowpump needs MariaDB 10.6 or later (SKIP LOCKED)");
        }
        return Dialect(Server::mariadb, "MariaDB " + numbers);
    }
    if (major < kMysqlMajor) {
        throw UnsupportedServer("the server is MySQL " + numbers +
                                "; rowpump needs MySQL 8.0 or later (SKIP LOCKED)");
    }
    return Dialect(Server::mysql, "MySQL " + numbers);
}

Dialect Dialect::mariadb() {
    return Dialect(Server::mariadb, "MariaDB");
}

std::string Dialect::time_limited(const std::string& select, Millis timeout) const {
    if (is_mariadb()) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.3f",
                      static_cast<double>(timeout.count()) / 1000.0);
        return "SET STATEMENT max_statement_time = " + std::string(seconds) + " FOR\n" + select;
    }
    // The hint must follow the SELECT keyword; 0 would mean no limit.
    const auto ms = std::max<std::int64_t>(1, timeout.count());
    return "SELECT /*+ MAX_EXECUTION_TIME(" + std::to_string(ms) + ") */" +
           select.substr(std::string("SELECT").size());
}

int Dialect::statement_timeout_error() const {
    return is_mariadb() ? 1969 : 3024;
}

std::string Dialect::without_lock_wait(const std::string& write) const {
    if (!is_mariadb()) return "";
    return "SET STATEMENT innodb_lock_wait_timeout = 0 FOR\n" + write;
}

std::string Dialect::add_columns(const std::string& table,
                                 const std::vector<ColumnDefinition>& columns) const {
    const std::string add = is_mariadb() ? "ADD COLUMN IF NOT EXISTS " : "ADD COLUMN ";
    std::string text = "ALTER TABLE " + quote_identifier(table);
    for (const auto& column : columns)
        text += "\n  " + add + quote_identifier(column.name) + " " + column.type + ",";
    return text + "\n  " + columns_algorithm();
}

std::string Dialect::add_index(const std::string& table, const std::string& index,
                               const std::string& column) const {
    return "ALTER TABLE " + quote_identifier(table) + "\n  ADD INDEX " +
           (is_mariadb() ? "IF NOT EXISTS " : "") + quote_identifier(index) + " (" +
           quote_identifier(column) + "),\n  " + index_algorithm();
}

std::string Dialect::columns_algorithm() const {
    return is_mariadb() ? "ALGORITHM=INSTANT, LOCK=NONE" : "ALGORITHM=INSTANT";
}

std::string Dialect::index_algorithm() const {
    return is_mariadb() ? "ALGORITHM=NOCOPY, LOCK=NONE" : "ALGORITHM=INPLACE, LOCK=NONE";
}

std::string Dialect::ddl_progress() const {
    if (is_mariadb()) {
        return "SELECT COALESCE(STATE, ''), IF(MAX_STAGE > 0, CONCAT('stage ', STAGE, ' of ', "
               "MAX_STAGE), ''), IF(MAX_STAGE > 0, PROGRESS, NULL) FROM "
               "information_schema.PROCESSLIST WHERE ID = ?";
    }
    return "SELECT COALESCE(p.STATE, ''), COALESCE(SUBSTRING_INDEX(s.EVENT_NAME, '/', -1), ''), "
           "100 * s.WORK_COMPLETED / NULLIF(s.WORK_ESTIMATED, 0) FROM "
           "information_schema.PROCESSLIST p LEFT JOIN performance_schema.threads t ON "
           "t.PROCESSLIST_ID = p.ID LEFT JOIN performance_schema.events_stages_current s ON "
           "s.THREAD_ID = t.THREAD_ID WHERE p.ID = ?";
}

}  // namespace rowpump
