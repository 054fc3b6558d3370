#pragma once

#include <iosfwd>
#include <string>

#include "rowpump/dispatcher/config.hpp"

namespace rowpump {

// The queue a subcommand names on the command line (`rowpump dead QUEUE`, `rowpump retry
// QUEUE`), or nullptr after telling `err` which queues the config does configure.
const QueueConfig* find_queue_or_complain(const Config& config, const std::string& name,
                                          std::ostream& err);

}  // namespace rowpump
