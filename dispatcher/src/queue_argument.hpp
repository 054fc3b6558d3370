#pragma once

#include <iosfwd>
#include <string>

#include "rowpump/dispatcher/config.hpp"

namespace rowpump {

// The queue a subcommand names on the command line (`rowpump dead QUEUE`, `rowpump retry
// QUEUE`), or nullptr after telling `err` which queues the config does configure.
const QueueConfig* find_queue_or_complain(const Config& config, const std::string& name,
                                          std::ostream& err);

// Listing and changing dead rows (dead, retry, the dashboard's actions and list) work on
// queues without shards only, for now.
inline constexpr const char* kShardedRowsNotYet =
    "the queue has shards; dead rows are listed and revived only for queues without shards "
    "(query each shard's table: rp_dead_at IS NOT NULL)";
// False after telling `err` so, for a queue with shards.
bool unsharded_or_complain(const QueueConfig& queue, std::ostream& err);

}  // namespace rowpump
