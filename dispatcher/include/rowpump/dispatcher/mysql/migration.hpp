#pragma once

// `rowpump migrate` on a live table: what each ALTER TABLE will do and cost, printed before
// anything runs, and each one run so that an operator can live with it (a short metadata
// lock wait that names who holds the table, elapsed time and the server's progress, Ctrl-C
// cancelling the statement on the server).

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/sql/dialect.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump {

struct MigrationStep {
    std::string what;       // "add the bookkeeping columns"
    std::string statement;  // the ALTER TABLE
    std::string effect;     // how the server runs it: copy, lock, what it waits for
    bool needed = true;     // false: already done, skipped
};

struct MigrationPlan {
    std::string queue;
    std::string table;
    // From information_schema.TABLES; nullopt when the server was not asked (dry run offline).
    std::optional<std::int64_t> rows, data_bytes, index_bytes;
    std::vector<MigrationStep> steps;
    // The dialect of the statements: the server's, or MariaDB's when it was not reached.
    std::optional<Dialect> dialect;
    std::string server;  // "MariaDB 10.11.6", for the plan's reader
};

// The plan for one queue. With a connection, asks the server's dialect and looks at the table
// (size, which columns and indexes exist: only the missing ones are added); without one, every
// step counts as needed, in MariaDB's dialect, and the size is unknown. Throws
// sql::SQLException (UnsupportedServer for a server rowpump does not serve).
MigrationPlan plan_migration(sql::Connection* conn, const Config& config, const QueueConfig& queue);

// SQL comments and statements, fit to paste into a mysql client.
void print_plan(const MigrationPlan& plan, std::ostream& out);

enum class DdlOutcome { done, lock_timeout, cancelled, failed };

// Runs one DDL statement on `conn` with lock_wait_timeout = `lock_wait`. Every second it
// prints the elapsed time and what the server reports (stage, progress) to `err`. SIGINT or
// SIGTERM cancels it on the server (KILL QUERY from a second connection). On a lock wait
// timeout it names the open transactions that may hold the table. The signals are blocked
// while it runs and unblocked after; call it from the main thread before any other thread.
// `dialect` says where the server reports progress.
DdlOutcome run_ddl(sql::Connection& conn, const MysqlConfig& mysql, const Dialect& dialect,
                   const std::string& statement, Millis lock_wait, std::ostream& out,
                   std::ostream& err);

}  // namespace rowpump
