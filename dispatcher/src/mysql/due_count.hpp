#pragma once

// The due backlog, counted the one way status, metrics and the dashboard share: up to
// due_count.cap rows, given up after due_count.timeout, with the oldest due row's age for
// queues that say when a row became due (due_since). docs/operations.md ("What the due count
// costs") says what that costs the database.

#include "rowpump/common/protocol/queue_gauges.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/sql/dialect.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump {

class MysqlServers;

// Counts now; throws sql::SQLException (Dialect::statement_timeout_error() when the statement
// ran out of time).
protocol::QueueGauges count_due(sql::Connection& mysql, const Dialect& dialect,
                                const QueueConfig& queue, const DueCountConfig& limits);

// The count over every source of `queue` (queue_sources: each shard, or the queue itself):
// the due rows add up, the count is capped when any shard's was, and the oldest due age is the
// oldest of any shard. Throws sql::SQLException.
protocol::QueueGauges count_due_everywhere(MysqlServers& servers, const Config& config,
                                           const QueueConfig& queue);

}  // namespace rowpump
