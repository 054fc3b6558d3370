#include "rowpump/testing/seed.hpp"

#include <algorithm>

#include "rowpump/testing/mysql_client.hpp"

namespace rowpump::testing {

void create_user_block_status(MysqlClient& db, const std::string& table) {
    db.exec("CREATE TABLE `" + table +
            "` (user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL DEFAULT 0, "
            "updated_time DATETIME(3) NOT NULL, KEY (updated_time)) ENGINE=InnoDB");
}

void insert_users(MysqlClient& db, std::int64_t first_id, std::int64_t count,
                  const std::string& updated_time, const std::string& table) {
    constexpr std::int64_t kRowsPerInsert = 1000;
    for (std::int64_t begin = first_id; begin < first_id + count; begin += kRowsPerInsert) {
        std::int64_t end = std::min(first_id + count, begin + kRowsPerInsert);
        std::string sql = "INSERT INTO `" + table + "` (user_id, status, updated_time) VALUES ";
        for (std::int64_t id = begin; id < end; ++id) {
            if (id != begin) sql += ',';
            sql += '(' + std::to_string(id) + ",0," + updated_time + ')';
        }
        db.exec(sql);
    }
}

void seed_user_block_status(MysqlClient& db, std::int64_t count) {
    create_user_block_status(db);
    insert_users(db, 1, count);
}

}  // namespace rowpump::testing
