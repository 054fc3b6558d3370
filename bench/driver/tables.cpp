#include "driver/tables.hpp"

#include <cmath>
#include <stdexcept>

#include "rowpump/testing/mysql_client.hpp"

namespace rowpump::bench {

namespace {

// The columns `rowpump migrate` adds (QueueSql::migrate), with the default names.
const char* const kBookkeeping =
    "rp_token VARCHAR(80) CHARACTER SET ascii COLLATE ascii_bin NULL, "
    "rp_lease_until DATETIME(3) NULL, "
    "rp_attempts INT UNSIGNED NOT NULL DEFAULT 0, "
    "rp_last_error VARCHAR(1024) NULL, "
    "rp_dead_at DATETIME(3) NULL";

std::string index_definition(const std::string& name) {
    if (name == "lease") return "KEY rp_lease_idx (rp_lease_until)";
    if (name == "token") return "KEY rp_token_idx (rp_token)";
    throw std::runtime_error("unknown bookkeeping index '" + name + "' (expected lease or token)");
}

void recreate(testing::MysqlClient& db, const std::string& table, const std::string& columns,
              const BookkeepingIndexes& indexes) {
    std::string keys;
    for (const auto& name : indexes) keys += ", " + index_definition(name);
    db.exec("DROP TABLE IF EXISTS " + table);
    db.exec("CREATE TABLE " + table + " (" + columns + ", " + kBookkeeping + keys +
            ") ENGINE=InnoDB");
}

// updated_time of row `seq`: distinct, 1 ms apart, all more than an hour in the past.
std::string past_times(std::int64_t rows) {
    return "NOW(3) - INTERVAL 1 HOUR - INTERVAL " + std::to_string(rows) +
           " * 1000 MICROSECOND + INTERVAL seq * 1000 MICROSECOND";
}

}  // namespace

void create_dispatch_table(testing::MysqlClient& db, std::int64_t rows,
                           const BookkeepingIndexes& indexes) {
    recreate(db, "user_block_status",
             "user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL DEFAULT 0, "
             "updated_time DATETIME(3) NOT NULL, KEY (updated_time)",
             indexes);
    db.exec("INSERT INTO user_block_status (user_id, status, updated_time) SELECT seq, 0, " +
            past_times(rows) + " FROM seq_1_to_" + std::to_string(rows));
}

void create_task_table(testing::MysqlClient& db, std::int64_t rows,
                       const BookkeepingIndexes& indexes, bool payload_columns) {
    if (!payload_columns) {
        recreate(db, "tasks",
                 "user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL DEFAULT 0, "
                 "updated_time DATETIME(3) NOT NULL, KEY (status, updated_time)",
                 indexes);
        db.exec("INSERT INTO tasks (user_id, status, updated_time) SELECT seq, 0, " +
                past_times(rows) + " FROM seq_1_to_" + std::to_string(rows));
        return;
    }
    recreate(db, "tasks",
             "user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL DEFAULT 0, "
             "updated_time DATETIME(3) NOT NULL, url VARCHAR(80) CHARACTER SET ascii NOT NULL, "
             "owner_id BIGINT NOT NULL, note VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL, "
             "KEY (status, updated_time)",
             indexes);
    // On the wire: " url=https%3A%2F%2Fexample.com%2Fusers%2F<id>" (~45 bytes), " owner_id=<n>"
    // (~16) and " note=re-check%20after%20the%20nightly%20import" (~46): about 100 bytes.
    db.exec(
        "INSERT INTO tasks (user_id, status, updated_time, url, owner_id, note) SELECT seq, 0, " +
        past_times(rows) +
        ", CONCAT('https://example.com/users/', seq), seq * 7, "
        "'re-check after the nightly import' FROM seq_1_to_" +
        std::to_string(rows));
}

void create_timed_table(testing::MysqlClient& db, const BookkeepingIndexes& indexes) {
    recreate(db, "timed_tasks",
             "id BIGINT PRIMARY KEY, status TINYINT NOT NULL DEFAULT 0, "
             "due_at DATETIME(6) NOT NULL, started_at DATETIME(6) NULL, KEY (status, due_at)",
             indexes);
}

void schedule_timed_rows(testing::MysqlClient& db, std::int64_t rows, double rate, int lead_ms) {
    const auto step_us = static_cast<std::int64_t>(std::llround(1e6 / rate));
    db.exec("INSERT INTO timed_tasks (id, status, due_at) SELECT seq, 0, NOW(6) + INTERVAL (" +
            std::to_string(static_cast<std::int64_t>(lead_ms) * 1000) + " + (seq - 1) * " +
            std::to_string(step_us) + ") MICROSECOND FROM seq_1_to_" + std::to_string(rows));
}

void create_fair_table(testing::MysqlClient& db, std::int64_t noisy, int quiet_keys, int quiet_rows,
                       const BookkeepingIndexes& indexes) {
    recreate(db, "fair_tasks",
             "id BIGINT PRIMARY KEY, tenant_id INT NOT NULL, status TINYINT NOT NULL DEFAULT 0, "
             "due_at DATETIME(6) NOT NULL, started_at DATETIME(6) NULL, "
             "KEY by_due (status, due_at), KEY by_tenant (tenant_id, due_at)",
             indexes);
    db.exec("SET @fair_loaded = NOW(6)");
    db.exec(
        "INSERT INTO fair_tasks (id, tenant_id, due_at) SELECT seq, 0, "
        "@fair_loaded + INTERVAL seq MICROSECOND FROM seq_1_to_" +
        std::to_string(noisy));
    const std::string n = std::to_string(noisy);
    db.exec("INSERT INTO fair_tasks (id, tenant_id, due_at) SELECT " + n +
            " + seq, 1 + (seq - 1) % " + std::to_string(quiet_keys) +
            ", @fair_loaded + INTERVAL (" + n + " + seq) MICROSECOND FROM seq_1_to_" +
            std::to_string(static_cast<std::int64_t>(quiet_keys) * quiet_rows));
    db.rows("ANALYZE TABLE fair_tasks PERSISTENT FOR ALL");  // a result set: read it
}

}  // namespace rowpump::bench
