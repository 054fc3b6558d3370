#pragma once

// Which server a connection reached, and so the dialect of the statements that differ
// (sql/dialect.hpp). Asked once per connection by the code that sends such statements.

#include "rowpump/dispatcher/sql/dialect.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump {

// From SELECT VERSION(). Throws sql::SQLException: the server's own errors, and one with
// error code kUnsupportedServerError (mysql_errors.hpp) for a server rowpump does not serve
// (MariaDB before 10.6, MySQL before 8.0), whose message names the server.
Dialect server_dialect(sql::Connection& conn);

}  // namespace rowpump
