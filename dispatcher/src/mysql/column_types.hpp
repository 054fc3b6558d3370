#pragma once

// Whether the bookkeeping columns of a queue's table have types rowpump can rely on: a lease
// column without milliseconds would lose every batch's read-back, an error column that is not
// utf8mb4 refuses reasons in other scripts (error 1366).

#include <string>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump {

// One line per column whose type does not fit, naming its config key ("rowpump.yaml:9:
// queues.users.columns.lease: ..."); columns that do not exist are not reported here.
std::vector<std::string> column_type_problems(sql::Connection& conn, const Config& config,
                                              const QueueConfig& queue);

}  // namespace rowpump
