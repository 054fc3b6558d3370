#pragma once

// The seed case of the design: a user_block_status table whose rows are re-checked.

#include <cstdint>
#include <string>

namespace rowpump::testing {

class MysqlClient;

// CREATE TABLE user_block_status (user_id BIGINT PRIMARY KEY, status, updated_time, KEY).
// Without rowpump's bookkeeping columns: `rowpump migrate --apply` adds those.
void create_user_block_status(MysqlClient& db, const std::string& table = "user_block_status");

// Rows first_id .. first_id+count-1, status 0, updated_time = `updated_time` (an SQL
// expression; the default is due for the default queue), inserted 1000 per statement.
void insert_users(MysqlClient& db, std::int64_t first_id, std::int64_t count,
                  const std::string& updated_time = "NOW(3) - INTERVAL 1 HOUR",
                  const std::string& table = "user_block_status");

// Both of the above: `count` due rows with ids 1..count.
void seed_user_block_status(MysqlClient& db, std::int64_t count);

}  // namespace rowpump::testing
