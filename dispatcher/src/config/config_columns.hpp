#pragma once

// The `columns:` section of a queue: the names of the bookkeeping columns rowpump writes, and
// the rules that keep them apart from the user's data.

#include "config/yaml_reader.hpp"
#include "rowpump/dispatcher/config/config.hpp"

namespace rowpump {

// A plain SQL identifier (a table, a column, an index), or a ConfigError.
std::string read_identifier(const yaml::Reader& r, const yaml::Item& item);

// Reads `columns` (if given) into queue.columns. The column names must be plain identifiers,
// differ from each other and from the id column, and be used by none of the queue's SQL
// (due, order_by, on_success, on_dead), which must already be in `queue`.
void read_columns(const yaml::Reader& r, const yaml::Map& queue_map, QueueConfig& queue);

}  // namespace rowpump
