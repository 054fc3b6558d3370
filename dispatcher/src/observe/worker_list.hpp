#pragma once

// The workers view (like Sidekiq's Busy page) as status --json and the dashboard's /api/state
// show it, and as `rowpump status` prints it. Everything but the id and the counts comes from
// the workers' heartbeat values: escaped, cut, and shown only (protocol/worker_info.hpp).

#include <nlohmann/json.hpp>

#include <ostream>

#include "rowpump/common/protocol/queue_state.hpp"

namespace rowpump {

nlohmann::json worker_list_json(const protocol::QueueState& state);
// One indented line per worker, under the queue's line of the table.
void print_worker_list(std::ostream& out, const protocol::QueueState& state);

}  // namespace rowpump
