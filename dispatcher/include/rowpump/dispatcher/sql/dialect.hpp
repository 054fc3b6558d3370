#pragma once

// The SQL that MariaDB and MySQL 8 spell differently, in one place: everything else rowpump
// sends is the same text on both. The server's dialect is read once per connection where it
// matters (mysql/server_dialect.hpp), from SELECT VERSION(). The MariaDB texts run in every
// test; the MySQL 8 texts are unit-tested as text only (docs/operations.md, "MariaDB and MySQL").

#include <stdexcept>
#include <string>
#include <vector>

#include "rowpump/common/duration.hpp"

namespace rowpump {

// A server rowpump does not serve (MariaDB before 10.6, MySQL before 8.0: no SKIP LOCKED),
// or a VERSION() it cannot read. The message names the server and what rowpump needs.
class UnsupportedServer : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A column migrate adds: its name (unquoted) and its type as ALTER TABLE spells it.
struct ColumnDefinition {
    std::string name;
    std::string type;
};

class Dialect {
public:
    // From SELECT VERSION(): "10.11.6-MariaDB-0+deb12u1" is MariaDB 10.11, "8.0.36" or
    // "8.4.2-log" MySQL. Throws UnsupportedServer.
    static Dialect from_version(const std::string& version);
    // For statements printed with no server at hand (`migrate` when MySQL is not reached).
    static Dialect mariadb();

    bool is_mariadb() const { return server_ == Server::mariadb; }
    // "MariaDB 10.11.6", "MySQL 8.0.36": for messages.
    const std::string& name() const { return name_; }

    // `select`, a statement starting with SELECT that only reads, given up by the server
    // after `timeout`: MariaDB's SET STATEMENT max_statement_time, MySQL's
    // MAX_EXECUTION_TIME optimizer hint.
    std::string time_limited(const std::string& select, Millis timeout) const;
    // The error the server raises for a statement time_limited() gave up: 1969 on MariaDB
    // (ER_STATEMENT_TIMEOUT), 3024 on MySQL (ER_QUERY_TIMEOUT).
    int statement_timeout_error() const;
    // `write`, an UPDATE, made to fail at once with a lock wait timeout (error 1205) where it
    // would wait for a row another transaction holds: MariaDB's SET STATEMENT
    // innodb_lock_wait_timeout = 0. Empty on MySQL, whose lock waits last a second at least.
    std::string without_lock_wait(const std::string& write) const;

    // Adds `columns` to `table` (both unquoted) without copying the table (ALGORITHM=INSTANT).
    // MariaDB: ADD COLUMN IF NOT EXISTS, so the statement is harmless to run twice. MySQL has
    // no IF NOT EXISTS here: pass only the columns information_schema.COLUMNS does not list,
    // and no LOCK clause (MySQL takes none with INSTANT).
    std::string add_columns(const std::string& table,
                            const std::vector<ColumnDefinition>& columns) const;
    // Adds index `index` on `column` while reads and writes go on, refusing a table copy:
    // MariaDB ADD INDEX IF NOT EXISTS ... ALGORITHM=NOCOPY, MySQL ADD INDEX ...
    // ALGORITHM=INPLACE (without IF NOT EXISTS: add it only when information_schema.STATISTICS
    // does not list it), both LOCK=NONE.
    std::string add_index(const std::string& table, const std::string& index,
                          const std::string& column) const;
    // The algorithm clauses of add_columns() and add_index(), for the plan's words.
    std::string columns_algorithm() const;
    std::string index_algorithm() const;

    // The progress of the statement running on connection `?`, as one row: the thread's state
    // ("Waiting for table metadata lock"), the stage ("stage 1 of 2" on MariaDB, "alter table
    // (merge sort)" on MySQL) and the percentage done (NULL when the server does not say).
    // MariaDB fills information_schema.PROCESSLIST's STAGE and PROGRESS for ALTER TABLE;
    // MySQL reports it in performance_schema.events_stages_current, when the
    // stage/innodb/alter% instruments and the events_stages_current consumer are enabled.
    std::string ddl_progress() const;

private:
    enum class Server { mariadb, mysql };
    Dialect(Server server, std::string name) : server_(server), name_(std::move(name)) {}

    Server server_;
    std::string name_;
};

}  // namespace rowpump
