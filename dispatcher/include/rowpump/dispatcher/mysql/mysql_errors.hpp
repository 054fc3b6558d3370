#pragma once

// Sorting the errors mysql-connector-c++ 1.1 throws, which decides what the dispatcher does
// next: reconnect, run the statement again, or set one row's data aside. The connector's
// types stay out of this header so that only the files that talk SQL pay for its
// (Boost-heavy) headers.

#include <functional>
#include <string>

namespace sql {
class SQLException;
}  // namespace sql

namespace rowpump {

// The connection is gone (server down, restarted, network): reconnect, re-prepare.
bool is_connection_error(const sql::SQLException& e);

// InnoDB gave up on a lock (deadlock or lock wait timeout) and rolled the statement or the
// transaction back; the connection is fine and trying again is right.
bool is_lock_conflict(const sql::SQLException& e);

// Runs `run` (a statement, or a whole transaction that rolls back on failure), and again at
// once after a lock conflict, up to kLockConflictAttempts times in all; then, or on any
// other error, the exception goes to the caller. Claims and outcomes use two connections at
// once (see QueueRunner), and InnoDB settles a conflict between them by rolling one side back;
// only a conflict that keeps coming back is an error.
constexpr int kLockConflictAttempts = 5;
void retry_lock_conflicts(const std::function<void()>& run);

// MySQL refused a value (out of range, wrong type, too long, NULL, duplicate key, foreign
// key, check constraint): the statement is fine, one row of its data is not.
bool is_data_error(const sql::SQLException& e);

// An error the values of one row may cause: anything but a lost connection, a lock conflict,
// or an error of the statement, the schema, the grants or the server, which every row of a
// batch would meet. Data errors (is_data_error) are such errors, and so is one no list here
// knows (1139 from a REGEXP in on_success that a worker's value makes invalid): applying the
// batch's rows one by one isolates the row that causes it.
bool is_row_error(const sql::SQLException& e);

// Not a server's code: rowpump's own refusal of a server it does not serve (server_dialect),
// thrown as a sql::SQLException so that every caller that reports MySQL errors reports it.
constexpr int kUnsupportedServerError = -1;

// "MySQL error 1146 (42S02): Table 'app.x' doesn't exist"; for kUnsupportedServerError,
// "unsupported server: the server is MySQL 5.7.44; rowpump needs MySQL 8.0 or later ..."
std::string describe(const sql::SQLException& e);

}  // namespace rowpump
