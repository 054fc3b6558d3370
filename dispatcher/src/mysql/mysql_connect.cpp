#include "rowpump/dispatcher/mysql/mysql_connect.hpp"

#include <cppconn/prepared_statement.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <algorithm>
#include <string>

#include "mysql/mysql_tls.hpp"

namespace rowpump {

MysqlThread::MysqlThread() {
    sql::mysql::get_mysql_driver_instance()->threadInit();
}
MysqlThread::~MysqlThread() {
    sql::mysql::get_mysql_driver_instance()->threadEnd();
}

std::unique_ptr<sql::Connection> connect_mysql(const MysqlConfig& config) {
    const int connect_seconds =
        std::max<int>(1, static_cast<int>((config.connect_timeout.count() + 999) / 1000));
    sql::ConnectOptionsMap options;
    options["hostName"] =
        sql::SQLString("tcp://" + config.host + ":" + std::to_string(config.port));
    options["userName"] = sql::SQLString(config.user);
    options["password"] = sql::SQLString(config.password);
    options["schema"] = sql::SQLString(config.database);
    options["OPT_CONNECT_TIMEOUT"] = connect_seconds;
    // A hung server must not hang a queue forever; no statement of ours runs this long.
    options["OPT_READ_TIMEOUT"] = 120;
    options["OPT_WRITE_TIMEOUT"] = 120;
    options["OPT_RECONNECT"] = false;
    options["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");

    std::unique_ptr<sql::Connection> conn = connect_with_tls(options, config);
    conn->setAutoCommit(true);
    std::unique_ptr<sql::Statement> stmt(conn->createStatement());
    stmt->execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    // The config's SQL fragments are checked as MariaDB reads them by default (statement_check:
    // backslash escapes in strings, "..." a string, || an OR): the session reads them that
    // way whatever the server's global sql_mode says (NO_BACKSLASH_ESCAPES, ANSI_QUOTES,
    // PIPES_AS_CONCAT, ORACLE would each change what a checked fragment means).
    stmt->execute("SET SESSION sql_mode = '" + std::string(kSessionSqlMode) + "'");
    // Claims and outcome batches touch disjoint rows; waiting long on a lock means something
    // else holds rows, and it is better to fail the batch and try again.
    stmt->execute("SET SESSION innodb_lock_wait_timeout = 10");
    return conn;
}

std::unique_ptr<sql::PreparedStatement> prepare_bound(sql::Connection& conn,
                                                      const std::string& statement,
                                                      const std::vector<std::string>& params) {
    std::unique_ptr<sql::PreparedStatement> stmt(conn.prepareStatement(statement));
    for (std::size_t i = 0; i < params.size(); ++i)
        stmt->setString(static_cast<unsigned>(i + 1), params[i]);
    return stmt;
}

}  // namespace rowpump
