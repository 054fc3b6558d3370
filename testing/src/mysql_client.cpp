#include "rowpump/testing/mysql_client.hpp"

#include <cppconn/connection.h>
#include <cppconn/exception.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_driver.h>

#include <stdexcept>

#include "rowpump/dispatcher/mysql/mysql_connect.hpp"

namespace rowpump::testing {

namespace {

sql::mysql::MySQL_Driver* driver() {
    // get_mysql_driver_instance() is not thread-safe on first use: make that first use here,
    // under the static initialization guard.
    static sql::mysql::MySQL_Driver* instance = sql::mysql::get_mysql_driver_instance();
    return instance;
}

std::optional<std::string> cell(sql::ResultSet& rs, std::uint32_t column) {
    if (rs.isNull(column)) return std::nullopt;
    return std::string(rs.getString(column));
}

}  // namespace

MysqlClient MysqlClient::connect(const MysqlLogin& login) {
    driver()->threadInit();  // idempotent; needed once per thread
    sql::ConnectOptionsMap options;
    options["hostName"] = sql::SQLString(login.host);
    options["port"] = login.port;
    options["userName"] = sql::SQLString(login.user);
    options["password"] = sql::SQLString(login.password);
    options["OPT_CONNECT_TIMEOUT"] = 5;
    if (!login.database.empty()) options["schema"] = sql::SQLString(login.database);
    return MysqlClient(std::unique_ptr<sql::Connection>(driver()->connect(options)));
}

MysqlClient MysqlClient::connect_as_dispatcher(const MysqlLogin& login) {
    MysqlConfig config;
    config.host = login.host;
    config.port = login.port;
    config.user = login.user;
    config.password = login.password;
    config.database = login.database;
    return MysqlClient(connect_mysql(config));
}

MysqlClient::MysqlClient(std::unique_ptr<sql::Connection> connection)
    : connection_(std::move(connection)) {}
MysqlClient::MysqlClient(MysqlClient&&) noexcept = default;
MysqlClient& MysqlClient::operator=(MysqlClient&&) noexcept = default;
MysqlClient::~MysqlClient() = default;

void MysqlClient::exec(const std::string& sql) {
    std::unique_ptr<sql::Statement> stmt(connection_->createStatement());
    stmt->execute(sql);
}

std::uint64_t MysqlClient::update(const std::string& sql) {
    std::unique_ptr<sql::Statement> stmt(connection_->createStatement());
    return static_cast<std::uint64_t>(stmt->executeUpdate(sql));
}

std::vector<Row> MysqlClient::rows(const std::string& sql) {
    std::unique_ptr<sql::Statement> stmt(connection_->createStatement());
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery(sql));
    std::uint32_t columns = rs->getMetaData()->getColumnCount();
    std::vector<Row> out;
    while (rs->next()) {
        Row row;
        for (std::uint32_t c = 1; c <= columns; ++c) row.push_back(cell(*rs, c));
        out.push_back(std::move(row));
    }
    return out;
}

std::optional<std::string> MysqlClient::scalar_string(const std::string& sql) {
    std::vector<Row> result = rows(sql);
    if (result.empty() || result[0].empty()) throw std::runtime_error("no row from: " + sql);
    return result[0][0];
}

std::int64_t MysqlClient::scalar(const std::string& sql) {
    std::optional<std::string> value = scalar_string(sql);
    if (!value) throw std::runtime_error("NULL from: " + sql);
    return std::stoll(*value);
}

std::vector<std::string> MysqlClient::column(const std::string& sql) {
    std::vector<std::string> out;
    for (auto& row : rows(sql)) out.push_back(row.at(0).value_or(""));
    return out;
}

std::map<std::string, std::optional<std::string>> MysqlClient::map(const std::string& sql) {
    std::map<std::string, std::optional<std::string>> out;
    for (auto& row : rows(sql)) {
        if (row.size() < 2 || !row[0]) throw std::runtime_error("map() needs two columns: " + sql);
        out.emplace(*row[0], row[1]);
    }
    return out;
}

std::string sql_quote(const std::string& value) {
    std::string out = "'";
    for (char c : value) {
        if (c == '\'' || c == '\\')
            out += c == '\'' ? "''" : "\\\\";
        else
            out += c;
    }
    return out + "'";
}

std::int64_t rows_updated(MysqlClient& db) {
    return db.scalar(
        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = "
        "'HANDLER_UPDATE'");
}

}  // namespace rowpump::testing
