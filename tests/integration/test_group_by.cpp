// group_by: the claim takes rows from the keys with due rows in turn (docs/fairness.md), and
// concurrency_per_key caps each key's tasks in flight. Asserted on data: the order the rows
// reached the ready list, and the handlers' own ledger of what ran at once.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_worker.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/test_bed.hpp"
#include "rowpump/worker.hpp"

using namespace rowpump::testing;
using namespace std::chrono_literals;

namespace {

// Key 0 has `noisy` rows, due longest; keys 1..quiet_keys have `quiet_rows` rows each, due
// after all of key 0's. Ids 1..noisy are key 0's.
void seed_tenants(MysqlClient& db, std::int64_t noisy, int quiet_keys, int quiet_rows) {
    db.exec(
        "CREATE TABLE user_block_status (user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL "
        "DEFAULT 0, updated_time DATETIME(3) NOT NULL, tenant INT NOT NULL, KEY (updated_time), "
        "KEY tenant_order (tenant, updated_time)) ENGINE=InnoDB");
    db.exec(
        "INSERT INTO user_block_status (user_id, updated_time, tenant) SELECT seq, "
        "NOW(3) - INTERVAL 1 DAY + INTERVAL seq * 1000 MICROSECOND, 0 FROM seq_1_to_" +
        std::to_string(noisy));
    const std::int64_t quiet = static_cast<std::int64_t>(quiet_keys) * quiet_rows;
    db.exec("INSERT INTO user_block_status (user_id, updated_time, tenant) SELECT " +
            std::to_string(noisy) +
            " + seq, NOW(3) - INTERVAL 1 HOUR + INTERVAL seq * 1000 MICROSECOND, "
            "1 + (seq - 1) % " +
            std::to_string(quiet_keys) + " FROM seq_1_to_" + std::to_string(quiet));
}

QueueSpec grouped_queue(std::int64_t max_backlog) {
    QueueSpec queue;
    queue.name = "tenants";
    queue.batch = 10;
    queue.max_backlog = max_backlog;
    queue.extra_lines = {"group_by: tenant"};
    return queue;
}

// The 1-based positions in the ready list of the rows with ids above `noisy` (the quiet keys').
std::vector<std::size_t> quiet_positions(const TestBed& bed, std::int64_t noisy) {
    auto redis = bed.redis_client();
    const auto tasks = parse_ready_all(list_all(redis, ready_key("tenants")));
    std::vector<std::size_t> positions;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (std::stoll(tasks[i].id) > noisy) positions.push_back(i + 1);
    }
    return positions;
}

}  // namespace

// 5 quiet keys of 4 rows behind a noisy key's 3000, claims of 10 rows: each claim shares its
// 10 rows over the 6 keys with due rows (2, 2, 2, 2, 1, 1), so every quiet row is pushed
// within the first 3 claims, 30 dispatches, however large the noisy backlog. No worker runs:
// the ready list keeps the order of the pushes, up to max_backlog (60).
TEST_CASE("with group_by, a noisy key's backlog does not delay a quiet key's rows",
          "[dispatcher][group_by]") {
    constexpr std::int64_t kNoisy = 3000;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_tenants(db, kNoisy, 5, 4);
    const std::string config = bed.write_config({grouped_queue(60)});
    migrate_apply(config);
    auto dispatcher = bed.start_dispatcher(config);
    auto redis = bed.redis_client();
    REQUIRE(eventually(30s, [&] { return list_length(redis, ready_key("tenants")) == 60; }));

    const auto positions = quiet_positions(bed, kNoisy);
    INFO("positions of the quiet keys' rows in the ready list: "
         << ::Catch::Detail::stringify(positions));
    REQUIRE(positions.size() == 20);
    CHECK(positions.back() <= 30);
}

// The control: the same rows without group_by go in order_by order, the noisy key first; the
// test above could fail.
TEST_CASE("without group_by, the noisy key's backlog goes first", "[dispatcher][group_by]") {
    constexpr std::int64_t kNoisy = 3000;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_tenants(db, kNoisy, 5, 4);
    auto queue = grouped_queue(60);
    queue.extra_lines.clear();
    const std::string config = bed.write_config({queue});
    migrate_apply(config);
    auto dispatcher = bed.start_dispatcher(config);
    auto redis = bed.redis_client();
    REQUIRE(eventually(30s, [&] { return list_length(redis, ready_key("tenants")) == 60; }));
    CHECK(quiet_positions(bed, kNoisy).empty());
}

// More keys than one claim visits: the bound of docs/fairness.md. A claim visits up to
// min(100, its capacity) keys of the ring, from where the last one stopped, so a key with due
// rows is visited at least once every ceil(keys / min(100, capacity)) claims and gives at
// least one row per visit. 250 keys (the noisy key 0 with 20,000 rows first in order_by, 249
// quiet keys with 2 rows each), batch 100: every quiet key's first row is pushed within
// ceil(250 / 100) = 3 claims, 300 pushes, and its last within 2 x 3 claims, 600 pushes, however
// large the noisy backlog. No worker runs: the ready list keeps the order of the pushes, up to
// max_backlog (1,000).
TEST_CASE(
    "with group_by and more keys than a claim visits, a quiet key waits at most its "
    "round of the ring",
    "[dispatcher][group_by]") {
    constexpr std::int64_t kNoisy = 20000;
    constexpr int kQuietKeys = 249;
    constexpr int kQuietRows = 2;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_tenants(db, kNoisy, kQuietKeys, kQuietRows);
    auto queue = grouped_queue(1000);
    queue.batch = 100;
    const std::string config = bed.write_config({queue});
    migrate_apply(config);
    auto dispatcher = bed.start_dispatcher(config);
    auto redis = bed.redis_client();
    REQUIRE(eventually(60s, [&] { return list_length(redis, ready_key("tenants")) == 1000; }));

    const auto tasks = parse_ready_all(list_all(redis, ready_key("tenants")));
    std::map<int, std::vector<std::size_t>> positions;  // quiet key -> its rows' positions
    std::size_t noisy_pushed = 0;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        const auto id = std::stoll(tasks[i].id);
        if (id <= kNoisy) {
            ++noisy_pushed;
            continue;
        }
        positions[1 + static_cast<int>((id - kNoisy - 1) % kQuietKeys)].push_back(i + 1);
    }
    REQUIRE(positions.size() == kQuietKeys);
    std::size_t latest_first = 0, latest_last = 0;
    for (const auto& [key, at] : positions) {
        INFO("quiet key " << key << " at " << ::Catch::Detail::stringify(at));
        REQUIRE(at.size() == kQuietRows);
        latest_first = std::max(latest_first, at.front());
        latest_last = std::max(latest_last, at.back());
    }
    INFO("latest first row of a quiet key at " << latest_first << ", latest last row at "
                                               << latest_last);
    CHECK(latest_first <= 300);
    CHECK(latest_last <= 600);
    CHECK(noisy_pushed > 0);  // the noisy key was visited too: a share, not a starvation
}

// concurrency_per_key: 2, 16 handler threads, a noisy key with 120 rows and 4 keys with 10:
// the handlers' own ledger (who ran at once, per key) never shows a key with more than 2
// handlers at a time, and every row completes.
TEST_CASE("concurrency_per_key is never exceeded, by the handlers' own ledger",
          "[dispatcher][group_by]") {
    constexpr std::int64_t kNoisy = 120;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_tenants(db, kNoisy, 4, 10);
    auto queue = grouped_queue(1000);
    queue.extra_lines.push_back("concurrency_per_key: 2");
    const std::string config = bed.write_config({queue});
    migrate_apply(config);
    auto dispatcher = bed.start_dispatcher(config);

    std::mutex mutex;
    std::map<int, int> running, most;
    std::int64_t ran = 0;
    const auto key_of = [&](const std::string& id) {
        const auto n = std::stoll(id);
        return n <= kNoisy ? 0 : 1 + static_cast<int>((n - kNoisy - 1) % 4);
    };
    rowpump::WorkerOptions options;
    options.redis.host = "127.0.0.1";
    options.redis.port = bed.redis.port();
    options.queue = "tenants";
    options.threads = 16;
    options.batch = 4;
    rowpump::Worker worker(options);
    {
        RunningWorker run(worker, [&](const rowpump::Task& task) {
            const int key = key_of(task.id);
            {
                std::lock_guard<std::mutex> lock(mutex);
                most[key] = std::max(most[key], ++running[key]);
            }
            std::this_thread::sleep_for(20ms);
            {
                std::lock_guard<std::mutex> lock(mutex);
                --running[key];
                ++ran;
            }
            return rowpump::Outcome::success({{"status", "1"}});
        });
        REQUIRE(eventually(60s, [&] {
            return db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 1") ==
                   kNoisy + 40;
        }));
    }
    std::lock_guard<std::mutex> lock(mutex);
    INFO("most handlers at once per key: " << ::Catch::Detail::stringify(most));
    for (const auto& [key, n] : most) CHECK(n <= 2);
    CHECK(most[0] == 2);  // the limit was reached, not merely never tested
    CHECK(ran >= kNoisy + 40);
}

// The key ring's listing costs one index dive per key, whatever the statistics: `keys` keys
// and the NULL key over 200,000 rows, bulk-loaded with no ANALYZE into a table whose persistent
// statistics are those of the empty table. Read from the server: every statement the
// dispatcher ran, with the rows it examined, in the slow log (long_query_time 0). The
// listing's statements are the key dives (or a GROUP BY over the key, what the listing was
// before), and they examine about a row per key per listing. The NULL key's rows reach the
// ready list (and with 10 keys, every key's).
namespace {

void check_listing_cost(int keys) {
    const int mod = keys + 1;  // ids of key k have id % mod == k; id % mod == keys: NULL
    TestBed bed;
    MysqlClient db = bed.db();
    db.exec(
        "CREATE TABLE user_block_status (user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL "
        "DEFAULT 0, updated_time DATETIME(3) NOT NULL, tenant INT NULL, KEY (updated_time), "
        "KEY tenant_order (tenant, updated_time)) ENGINE=InnoDB STATS_PERSISTENT=1 "
        "STATS_AUTO_RECALC=0");
    db.exec("SET GLOBAL log_output = 'TABLE'");
    db.exec("SET GLOBAL long_query_time = 0");
    db.exec("SET GLOBAL slow_query_log = 1");
    db.exec("TRUNCATE mysql.slow_log");
    const std::string config = bed.write_config({grouped_queue(1000000)});
    // The statistics stay those of the empty table (no recalculation after the load), as
    // right after a bulk load into a new table.
    migrate_apply(config);
    db.rows("ANALYZE TABLE user_block_status");
    db.exec(
        "INSERT INTO user_block_status (user_id, updated_time, tenant) SELECT seq, "
        "NOW(3) - INTERVAL 1 DAY + INTERVAL seq * 100 MICROSECOND, NULLIF(seq % " +
        std::to_string(mod) + ", " + std::to_string(keys) + ") FROM seq_1_to_200000");
    const std::string listing =
        "FROM mysql.slow_log WHERE sql_text LIKE 'SELECT MIN(`tenant`)%' "
        "OR sql_text LIKE 'SELECT 1 FROM % WHERE `tenant` IS NULL LIMIT 1' "
        "OR sql_text LIKE 'SELECT `tenant` FROM % GROUP BY `tenant` ORDER BY `tenant`%'";
    const std::string listings_started =
        "FROM mysql.slow_log WHERE sql_text LIKE 'SELECT 1 FROM % WHERE `tenant` IS NULL%' "
        "OR (sql_text LIKE 'SELECT `tenant` FROM % GROUP BY `tenant` ORDER BY `tenant`%' "
        "AND sql_text NOT LIKE '% > %')";
    // Several listings (the ring is listed again every poll.max, 100 ms): the prepared
    // statement's later executions too.
    {
        auto dispatcher = bed.start_dispatcher(config);
        REQUIRE(
            eventually(60s, [&] { return db.scalar("SELECT COUNT(*) " + listings_started) >= 5; }));
    }
    db.exec("SET GLOBAL slow_query_log = 0");

    auto redis = bed.redis_client();
    std::map<int, int> by_key;
    for (const auto& task : parse_ready_all(list_all(redis, ready_key("tenants"))))
        ++by_key[static_cast<int>(std::stoll(task.id) % mod)];
    INFO("keys with rows in the ready list: " << by_key.size());
    CHECK(by_key.count(keys) == 1);  // the NULL key
    if (keys <= 10) CHECK(by_key.size() == static_cast<std::size_t>(mod));

    const auto listings = db.scalar("SELECT COUNT(*) " + listings_started);
    const auto examined = db.scalar("SELECT COALESCE(SUM(rows_examined), 0) " + listing);
    const auto most = db.scalar("SELECT COALESCE(MAX(rows_examined), 0) " + listing);
    INFO(keys << " keys: listings " << listings << ", rows examined by the listing statements "
              << examined << ", most by one " << most);
    REQUIRE(listings >= 1);
    CHECK(examined <= listings * (mod + 4));
    CHECK(most <= mod + 4);
}

}  // namespace

TEST_CASE("the key listing examines about one row per key, whatever the statistics",
          "[dispatcher][group_by]") {
    SECTION("10 keys over 200,000 rows") {
        check_listing_cost(10);
    }
    SECTION("1,000 keys over 200,000 rows") {
        check_listing_cost(1000);
    }
}
