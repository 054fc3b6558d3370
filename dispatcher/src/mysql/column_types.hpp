#pragma once

// Whether the bookkeeping columns of a queue's table have types rowpump can rely on: a lease
// column without milliseconds would lose every batch's read-back, an error column that is not
// utf8mb4 refuses reasons in other scripts (error 1366). And how the payload columns are read,
// and whether their values fit in payload_max.

#include <string>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump {

// One line per column whose type does not fit, naming its config key ("rowpump.yaml:9:
// queues.users.columns.lease: ..."); columns that do not exist are not reported here.
std::vector<std::string> column_type_problems(sql::Connection& conn, const Config& config,
                                              const QueueConfig& queue);

// Which columns of the queue's payload are DATETIME or TIMESTAMP (QueueSql reads them as ISO
// 8601 UTC); a column the table lacks is left out (the statement check names it).
PayloadKinds payload_kinds(sql::Connection& conn, const std::string& database,
                           const QueueConfig& queue);

// For `rowpump check`: a payload column the table lacks (an error), and a payload whose
// longest values can make a ready message longer than payload_max (a warning: such a row is
// reported failed when it comes).
struct PayloadProblems {
    std::vector<std::string> errors, warnings;
};
PayloadProblems payload_problems(sql::Connection& conn, const Config& config,
                                 const QueueConfig& queue);

}  // namespace rowpump
