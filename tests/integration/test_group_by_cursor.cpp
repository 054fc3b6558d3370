// group_by with order_by: a key that gave its whole share goes on from its cursor next time
// (docs/fairness.md), and its read is an index range that starts there: the rows behind the
// cursor (done, or in flight) are not read again by every claim. Asserted on what the server
// itself counted for each of the dispatcher's claim statements (its slow log, as a table).

#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;
using namespace std::chrono_literals;

// Key 0 with 50,000 rows done (status 1, behind every due row of it) and then 50,000 due
// rows, 99 quiet keys with 2 due rows each, `batch` 100, no worker, so that claims go on until
// the ready list holds max_backlog. After key 0's first read (from its first row, which
// passes over the done rows once), each claim reads key 0 from its cursor: a claim statement
// with a cursor examines about the rows it claims (the per-key reads, the derived table and
// the join: 3 x batch) plus a constant, not key 0's done rows. Before the range was forced,
// MariaDB 10.11 planned key 0's read as `ref` on the key column alone (its rows past the
// cursor estimated above its rows per key) and examined over 50,000 rows every claim.
TEST_CASE("with group_by a key's read starts at its cursor and not at its done rows",
          "[dispatcher][group_by]") {
    constexpr std::int64_t kDone = 50000, kDue = 50000;
    constexpr int kQuietKeys = 99, kBatch = 100;
    TestBed bed;
    MysqlClient db = bed.db();
    db.exec(
        "CREATE TABLE user_block_status (user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL "
        "DEFAULT 0, updated_time DATETIME(3) NOT NULL, tenant INT NOT NULL, KEY (updated_time), "
        "KEY tenant_order (tenant, updated_time)) ENGINE=InnoDB");
    db.exec(
        "INSERT INTO user_block_status (user_id, status, updated_time, tenant) SELECT seq, "
        "seq <= " +
        std::to_string(kDone) +
        ", NOW(3) - INTERVAL 1 DAY + INTERVAL seq * 1000 MICROSECOND, 0 FROM seq_1_to_" +
        std::to_string(kDone + kDue));
    db.exec("INSERT INTO user_block_status (user_id, updated_time, tenant) SELECT " +
            std::to_string(kDone + kDue) +
            " + seq, NOW(3) - INTERVAL 1 HOUR + INTERVAL seq * 1000 MICROSECOND, 1 + (seq - 1) "
            "% " +
            std::to_string(kQuietKeys) + " FROM seq_1_to_" + std::to_string(kQuietKeys * 2));

    QueueSpec queue;
    queue.name = "tenants";
    queue.due = "status = 0 AND updated_time < NOW(3) - INTERVAL 10 SECOND";
    queue.batch = kBatch;
    queue.max_backlog = 3000;
    queue.extra_lines = {"group_by: tenant"};
    const std::string config = bed.write_config({queue});
    migrate_apply(config);
    db.rows("ANALYZE TABLE user_block_status");  // a result set: read it
    // Every statement of the sessions opened from here on, with the rows it examined.
    db.exec("SET GLOBAL log_output = 'TABLE'");
    db.exec("SET GLOBAL long_query_time = 0");
    db.exec("SET GLOBAL slow_query_log = 1");
    auto dispatcher = bed.start_dispatcher(config);
    auto redis = bed.redis_client();
    REQUIRE(eventually(60s, [&] { return list_length(redis, ready_key("tenants")) >= 3000; }));
    db.exec("SET GLOBAL slow_query_log = 0");

    // The grouped claims with at least one key read from its cursor (`updated_time` >= ...).
    const auto examined = db.column(
        "SELECT rows_examined FROM mysql.slow_log WHERE sql_text LIKE 'UPDATE %_rp_claim%' "
        "AND sql_text LIKE '%`updated_time` >= %' ORDER BY start_time");
    INFO("rows examined by each claim statement with a cursor: "
         << ::Catch::Detail::stringify(examined));
    REQUIRE(examined.size() >= 5);
    for (const auto& rows : examined) CHECK(std::stoll(rows) <= 3 * kBatch + 200);
    // The first read of key 0, from its first row, did pass over the done rows: the test
    // could see them.
    CHECK(db.scalar("SELECT MAX(rows_examined) FROM mysql.slow_log WHERE sql_text LIKE "
                    "'UPDATE %_rp_claim%'") >= kDone);
}
