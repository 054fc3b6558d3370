#pragma once

// The `rowpump` subcommands. Each returns the process exit code: 0 fine, 1 a problem was
// found or a server could not be reached. Output goes to `out`, problems to `err`.

#include <iosfwd>
#include <string>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"

namespace rowpump {

// A missing subcommand, an unknown option or a bad argument (retry's ids and --all, --set)
// exits with this.
constexpr int kUsageError = 2;

// Runs the dispatcher until SIGTERM or SIGINT (then finishes the current batches and returns
// 0); a second signal exits at once with status 1. A server refusing the configured login at
// start is fatal (kLoginRefusedExit); a server that is down is waited for.
int command_run(const Config& config);

// Validates the setup against the servers and prints each queue's claim statement.
// Warnings (a due scan that reads the whole table) fail only with `strict`.
int command_check(const Config& config, bool strict, std::ostream& out, std::ostream& err);

struct MigrateOptions {
    bool apply = false;
    // How long an ALTER waits for the table's metadata lock (lock_wait_timeout) before it
    // gives up and names the transactions that hold the table.
    Millis lock_wait{5000};
};

// Prints each queue's migration plan (table size, each ALTER TABLE and what it will do), and
// with `apply` runs the steps not done yet, showing elapsed time; Ctrl-C cancels the running
// statement on the server (status 130). See migration.hpp.
int command_migrate(const Config& config, const MigrateOptions& options, std::ostream& out,
                    std::ostream& err);

// One line per queue: due backlog, ready, in flight, counters, oldest due age, leader; with
// `json`, one JSON object per queue and line instead. With `watch` > 0, repeats every
// `watch` (`count` times; 0 = until interrupted) with per-second rates.
int command_status(const Config& config, Millis watch, int count, bool json, std::ostream& out,
                   std::ostream& err);

// Pauses (`pause` true) or resumes a queue for every dispatcher (rowpump:{q}:paused).
int command_pause(const Config& config, const std::string& queue, bool pause, std::ostream& out,
                  std::ostream& err);

// Dead rows of a queue, newest first; of every shard of a queue with shards, with the shard's
// name first on each line.
int command_dead(const Config& config, const std::string& queue, int limit, std::ostream& out,
                 std::ostream& err);

// Makes dead rows due again: the given ids, or all of them, after applying the operator's
// SET list `set` (empty: none) to them. Changes nothing, and says which and why, if any of
// them would not be due afterwards (say on_dead changed a column the due condition reads).
// A queue with shards needs `shard`, the shard whose rows to revive (ids are per shard).
int command_retry(const Config& config, const std::string& queue, const std::string& shard,
                  const std::vector<std::string>& ids, bool all, const std::string& set,
                  std::ostream& out, std::ostream& err);

// rowpump limit set|unset|list: the per-key limits of a queue with group_by (the Redis hash
// rowpump:{<queue>}:key_limits, docs/fairness.md). `set` merges the named limits ("rate",
// "100/1s", "weight", "3", ...) into what the key had; `unset` removes the key's; `list` prints
// them all, each refused value with why. 1 on unknown queue, a queue without group_by, a full
// hash or Redis down; kUsageError for a bad key or limit.
struct LimitCommand {
    enum class Action { set, unset, list } action = Action::list;
    std::string queue, key;
    std::vector<std::string> limits;  // set: name value name value ...
};
int command_limit(const Config& config, const LimitCommand& command, std::ostream& out,
                  std::ostream& err);

}  // namespace rowpump
