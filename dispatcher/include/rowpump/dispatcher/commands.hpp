#pragma once

// The `rowpump` subcommands. Each returns the process exit code: 0 fine, 1 a problem was
// found or a server could not be reached. Output goes to `out`, problems to `err`.

#include <iosfwd>
#include <string>
#include <vector>

#include "rowpump/dispatcher/config.hpp"

namespace rowpump {

// Logs go to stderr; `level` is one of Config::log_level's values.
void setup_logging(const std::string& level);

// Runs the dispatcher until SIGTERM or SIGINT (then finishes the current batches and returns
// 0); a second signal exits at once with status 1.
int command_run(const Config& config);

// Validates the setup against the servers and prints each queue's claim statement.
// Warnings (a due scan that reads the whole table) fail only with `strict`.
int command_check(const Config& config, bool strict, std::ostream& out, std::ostream& err);

// Prints, or with `apply` runs, the ALTER TABLE statements for every queue.
int command_migrate(const Config& config, bool apply, std::ostream& out, std::ostream& err);

// One line per queue: due backlog, ready, in flight, counters. With `watch` > 0, repeats
// every `watch` (`count` times; 0 = until interrupted) with per-second rates.
int command_status(const Config& config, Millis watch, int count, std::ostream& out, std::ostream& err);

// Dead rows of a queue, newest first.
int command_dead(const Config& config, const std::string& queue, int limit, std::ostream& out,
                 std::ostream& err);

// Makes dead rows due again: the given ids, or all of them.
int command_retry(const Config& config, const std::string& queue, const std::vector<std::string>& ids,
                  bool all, std::ostream& out, std::ostream& err);

}  // namespace rowpump
