#pragma once

// Whether a queue's `id` names one row: every outcome changes the rows with its id, so an id
// several rows share would let one outcome change them all.

#include <string>

#include "rowpump/dispatcher/config/config.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump {

// "" when the id column is the primary key or a unique key of that column alone and NOT
// NULL; otherwise one line naming the config key ("rowpump.yaml:9: queues.users.id: ...").
std::string id_key_problem(sql::Connection& conn, const Config& config, const QueueConfig& queue);

}  // namespace rowpump
