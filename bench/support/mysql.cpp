#include "support/mysql.hpp"

#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

namespace rowpump::bench {

MysqlThread::MysqlThread() {
    sql::mysql::get_mysql_driver_instance()->threadInit();
}
MysqlThread::~MysqlThread() {
    sql::mysql::get_mysql_driver_instance()->threadEnd();
}

std::unique_ptr<sql::Connection> connect_mysql(const ServerEnv& env) {
    sql::ConnectOptionsMap options;
    options["hostName"] =
        sql::SQLString("tcp://" + env.mysql_host + ":" + std::to_string(env.mysql_port));
    options["userName"] = sql::SQLString(env.mysql_user);
    options["password"] = sql::SQLString(env.mysql_password);
    options["schema"] = sql::SQLString(env.mysql_database);
    options["OPT_RECONNECT"] = false;
    options["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
    std::unique_ptr<sql::Connection> conn(
        sql::mysql::get_mysql_driver_instance()->connect(options));
    conn->setAutoCommit(true);
    exec(*conn, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    return conn;
}

void exec(sql::Connection& conn, const std::string& statement) {
    std::unique_ptr<sql::Statement> stmt(conn.createStatement());
    stmt->execute(statement);
}

std::int64_t query_int(sql::Connection& conn, const std::string& query) {
    std::unique_ptr<sql::Statement> stmt(conn.createStatement());
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery(query));
    return rs->next() && !rs->isNull(1) ? rs->getInt64(1) : 0;
}

std::vector<std::int64_t> query_ints(sql::Connection& conn, const std::string& query) {
    std::unique_ptr<sql::Statement> stmt(conn.createStatement());
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery(query));
    std::vector<std::int64_t> values;
    values.reserve(rs->rowsCount());
    while (rs->next()) values.push_back(rs->isNull(1) ? 0 : rs->getInt64(1));
    return values;
}

}  // namespace rowpump::bench
