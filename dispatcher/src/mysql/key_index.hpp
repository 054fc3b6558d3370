#pragma once

// With group_by: the index each key's read goes through (docs/fairness.md).

#include <string>

#include "rowpump/dispatcher/config/config.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump {

// The name of an index of the queue's table (in the session's database) that starts with the
// group_by column, one whose second column is the first order_by column first; "" when there
// is none (`rowpump check` warns about that) or its name is not a plain identifier.
std::string find_key_index(sql::Connection& conn, const QueueConfig& queue);

}  // namespace rowpump
