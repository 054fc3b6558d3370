#include "mysql/mysql_tls.hpp"

#include <cppconn/exception.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

namespace rowpump {

namespace {

constexpr int kSslConnectionError = 2026;  // CR_SSL_CONNECTION_ERROR

void set_tls_options(sql::ConnectOptionsMap& options, const MysqlTls& tls) {
    if (tls.mode == TlsMode::disabled) return;
    options["sslEnforce"] = true;
    if (!tls.ca.empty()) options["sslCA"] = sql::SQLString(tls.ca);
    if (tls.mode == TlsMode::verify_identity) options["sslVerify"] = true;
    if (!tls.cert.empty()) {
        options["sslCert"] = sql::SQLString(tls.cert);
        options["sslKey"] = sql::SQLString(tls.key);
    }
}

// What the login used, for an account that refused it: REQUIRE SSL and REQUIRE X509 accounts
// refuse a login without TLS or without a certificate with the same "Access denied" as a
// wrong password.
std::string describe_login_tls(const MysqlTls& tls) {
    std::string text = " [mysql.tls.mode: " + std::string(tls_mode_name(tls.mode));
    if (tls.mode == TlsMode::disabled) {
        text += ", no TLS; an account created REQUIRE SSL refuses a login without TLS";
    } else if (tls.cert.empty()) {
        text +=
            ", no client certificate; an account created REQUIRE X509 refuses a login "
            "without one (mysql.tls.cert and mysql.tls.key)";
    } else {
        text += ", client certificate " + tls.cert;
    }
    return text + "]";
}

bool is_access_denied(const sql::SQLException& e) {
    return e.getErrorCode() == 1045;
}

}  // namespace

std::unique_ptr<sql::Connection> connect_with_tls(sql::ConnectOptionsMap& options,
                                                  const MysqlConfig& mysql) {
    set_tls_options(options, mysql.tls);
    std::unique_ptr<sql::Connection> conn;
    try {
        conn.reset(sql::mysql::get_mysql_driver_instance()->connect(options));
    } catch (const sql::SQLException& e) {
        if (!is_access_denied(e)) throw;
        throw sql::SQLException(e.what() + describe_login_tls(mysql.tls), e.getSQLState(),
                                e.getErrorCode());
    }
    const bool must_encrypt =
        mysql.tls.mode == TlsMode::required || mysql.tls.mode == TlsMode::verify_ca;
    if (must_encrypt && tls_cipher(*conn).empty()) {
        throw sql::SQLException("the server did not start TLS, and mysql.tls.mode is " +
                                    std::string(tls_mode_name(mysql.tls.mode)) +
                                    ": closed the connection before any statement",
                                "HY000", kSslConnectionError);
    }
    return conn;
}

std::string tls_cipher(sql::Connection& conn) {
    std::unique_ptr<sql::Statement> stmt(conn.createStatement());
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery("SHOW SESSION STATUS LIKE 'Ssl_cipher'"));
    return rs->next() ? std::string(rs->getString(2)) : std::string();
}

}  // namespace rowpump
