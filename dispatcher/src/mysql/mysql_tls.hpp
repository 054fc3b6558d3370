#pragma once

// TLS on a MySQL connection (`mysql.tls`, config.hpp): the connector options for each mode,
// the checks the client library leaves out, and what a session's encryption is.
//
// mysql-connector-c++ 1.1.12 as Debian 12 builds it links libmariadb 3.3, which has no
// MYSQL_OPT_SSL_MODE (the connector's OPT_SSL_MODE is ignored there). What it does have:
//   sslEnforce=true  TLS when the server offers it, otherwise plain text, silently;
//   sslCA            the server's certificate chain is checked against the CA;
//   sslVerify=true   the certificate must also name the host, and a server without TLS is
//                    refused before the login;
//   sslCert, sslKey  a client certificate.
// So `required` and `verify_ca` are completed here: a session that is not encrypted is closed
// right after the login, before any statement runs.

#include <cppconn/connection.h>

#include <memory>
#include <string>

#include "rowpump/dispatcher/config/config.hpp"

namespace rowpump {

// Connects with `options` (host, user, ...) and the TLS settings of `mysql.tls`. Throws
// sql::SQLException: a refused login says which TLS settings were used, a session that should
// be encrypted and is not is refused (error 2026).
std::unique_ptr<sql::Connection> connect_with_tls(sql::ConnectOptionsMap& options,
                                                  const MysqlConfig& mysql);

// The session's TLS cipher (SHOW STATUS LIKE 'Ssl_cipher'); "" when it is not encrypted.
std::string tls_cipher(sql::Connection& conn);

}  // namespace rowpump
