#pragma once

// Queues on one table: each needs bookkeeping columns of its own. Two queues writing the same
// claim, lease and dead columns of a row would take each other's claims for their own (with
// claim: redis, every outcome of one makes the other's stale), and `dead`, `retry` and the
// dashboard could not tell their dead rows apart.

#include "rowpump/dispatcher/config/config.hpp"

namespace rowpump {

// Throws a ConfigError at the later queue's `columns` (or `table`) key when two queues (or
// shards of queues) on one table of one server share a bookkeeping column or the lease index.
void check_shared_tables(const Config& config);

}  // namespace rowpump
