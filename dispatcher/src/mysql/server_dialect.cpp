#include "rowpump/dispatcher/mysql/server_dialect.hpp"

#include <cppconn/exception.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <memory>

#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

Dialect server_dialect(sql::Connection& conn) {
    std::unique_ptr<sql::Statement> stmt(conn.createStatement());
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery("SELECT VERSION()"));
    const std::string version = rs->next() ? std::string(rs->getString(1)) : std::string();
    try {
        return Dialect::from_version(version);
    } catch (const UnsupportedServer& e) {
        // As a MySQL error, so that every caller that handles those reports it.
        throw sql::SQLException(e.what(), "HY000", kUnsupportedServerError);
    }
}

}  // namespace rowpump
