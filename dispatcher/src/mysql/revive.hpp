#pragma once

// Reviving dead rows, shared by `rowpump retry` and the dashboard's retry action: in one
// transaction, apply the operator's SET list (if any), reset attempts and claim, and clear the
// dead mark only if every revived row is due afterwards; otherwise change nothing, so the
// rows stay listed as dead instead of becoming neither dead nor due.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/sql/sql.hpp"

namespace rowpump {

struct Revived {
    std::int64_t rows = 0;     // dead rows found among the ids (all dead rows without ids)
    std::int64_t not_due = 0;  // of those, how many the due condition is false for
    std::string not_due_ids;   // the first few of them, comma-separated
    bool committed() const { return not_due == 0; }
};

// Revives `ids`, or every dead row when `ids` is empty. Throws sql::SQLException.
Revived revive_dead_rows(const Config& config, const QueueConfig& queue,
                         const std::vector<std::string>& ids,
                         const std::optional<SqlFragment>& set);

// Why the rows of a revive that changed nothing would not be due, and what to do about it.
std::string explain_not_due(const QueueConfig& queue, const Revived& revived, bool with_set);

}  // namespace rowpump
