#pragma once

// A MySQL connection for test code (mysql-connector-c++ 1.1), with the few query helpers
// tests need. Values read back are strings; SQL NULL is nullopt.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sql {
class Connection;
}

namespace rowpump::testing {

struct MysqlLogin {
    std::string host = "127.0.0.1";
    int port = 3306;
    std::string user;
    std::string password;
    std::string database;  // empty: none selected
};

using Row = std::vector<std::optional<std::string>>;

class MysqlClient {
public:
    // Throws sql::SQLException (a std::runtime_error) when the server cannot be reached.
    static MysqlClient connect(const MysqlLogin& login);
    // A session set up by the dispatcher's own connect_mysql() (autocommit, READ COMMITTED,
    // utf8mb4), so that benchmark baselines and rowpump run on equal terms. A thread that
    // uses it holds a rowpump::MysqlThread.
    static MysqlClient connect_as_dispatcher(const MysqlLogin& login);

    MysqlClient(MysqlClient&&) noexcept;
    MysqlClient& operator=(MysqlClient&&) noexcept;
    ~MysqlClient();

    void exec(const std::string& sql);
    std::uint64_t update(const std::string& sql);  // affected rows
    // First column of the first row; throws std::runtime_error on no row or NULL.
    std::int64_t scalar(const std::string& sql);
    std::optional<std::string> scalar_string(const std::string& sql);  // nullopt on NULL
    std::vector<std::string> column(const std::string& sql);           // first column, NULL as ""
    std::vector<Row> rows(const std::string& sql);
    // Two columns as a map: first -> second (NULL second as nullopt).
    std::map<std::string, std::optional<std::string>> map(const std::string& sql);
    // For prepared statements.
    sql::Connection& connection() { return *connection_; }

private:
    explicit MysqlClient(std::unique_ptr<sql::Connection> connection);
    std::unique_ptr<sql::Connection> connection_;
};

// 'it''s' style quoting for values written into test SQL.
std::string sql_quote(const std::string& value);

// Rows the server has updated since it started (MariaDB's Handler_update, every session).
std::int64_t rows_updated(MysqlClient& db);

}  // namespace rowpump::testing
