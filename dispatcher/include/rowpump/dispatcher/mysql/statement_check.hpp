#pragma once

// Every statement `rowpump run` sends for a queue, prepared (not run) against its table
// before the first claim: SQL from the config that MySQL does not take (an on_success with a
// WHERE, a column that does not exist) is then found by `check` and stops `run` at start,
// instead of failing every claim or outcome batch forever.

#include <string>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump {

// One line per config key whose SQL MySQL refuses, e.g. "rowpump.yaml:14:
// queues.users.on_success: MySQL refuses the success outcome statement: MySQL error 1064
// (42000): ...". Empty when every statement prepares. Connection errors are thrown, and so
// is a server rowpump does not serve (kUnsupportedServerError, mysql_errors.hpp).
std::vector<std::string> prepare_queue_statements(sql::Connection& conn, const Config& config,
                                                  const QueueConfig& queue);

// The same for every queue, on a connection of its own. When MySQL cannot be reached (`run`
// waits that out), `unreachable` says why and the queues not yet checked are skipped. A
// server rowpump does not serve is a problem, not unreachable.
std::vector<std::string> prepare_all_statements(const Config& config, std::string& unreachable);

}  // namespace rowpump
