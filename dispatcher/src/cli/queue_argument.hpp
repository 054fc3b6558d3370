#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "rowpump/dispatcher/config/config.hpp"

namespace rowpump {

// The queue a subcommand names on the command line (`rowpump dead QUEUE`, `rowpump retry
// QUEUE`), or nullptr after telling `err` which queues the config does configure.
const QueueConfig* find_queue_or_complain(const Config& config, const std::string& name,
                                          std::ostream& err);

// The source (queue_sources) whose rows a command changes: the queue itself without shards,
// the shard named `shard` with them. A queue with shards needs the name, since each shard is
// its own table and the same id may be a different row on each. nullopt after telling `err`
// what is wrong (a name for a queue without shards, none or an unknown one for one with);
// `option` is how the caller's user gives the name ("--shard", "\"shard\"").
std::optional<QueueSource> source_or_complain(const Config& config, const QueueConfig& queue,
                                              const std::string& shard, const std::string& option,
                                              std::ostream& err);

}  // namespace rowpump
