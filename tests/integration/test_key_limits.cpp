// Per-key limits with group_by (docs/fairness.md): rate_per_key on the Redis clock, overrides
// for named keys set at run time (`rowpump limit set`, the key_limits hash) and weights.
// Asserted on data: the server's own push times (PushMonitor: MONITOR stamps each command with
// the Redis clock) and the rows in the ready list per key.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/push_monitor.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;
using namespace std::chrono_literals;

namespace {

// `rows` rows, ids 1..rows, row `id` of key (id % keys) + 1, all due.
void seed_keys(MysqlClient& db, std::int64_t rows, int keys) {
    db.exec(
        "CREATE TABLE user_block_status (user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL "
        "DEFAULT 0, updated_time DATETIME(3) NOT NULL, tenant INT NOT NULL, KEY (updated_time), "
        "KEY tenant_order (tenant, updated_time)) ENGINE=InnoDB");
    db.exec(
        "INSERT INTO user_block_status (user_id, updated_time, tenant) SELECT seq, "
        "NOW(3) - INTERVAL 1 DAY + INTERVAL seq * 1000 MICROSECOND, 1 + seq % " +
        std::to_string(keys) + " FROM seq_1_to_" + std::to_string(rows));
}

int key_of(const std::string& id, int keys) {
    return 1 + static_cast<int>(std::stoll(id) % keys);
}

QueueSpec keyed_queue(int batch, std::int64_t max_backlog) {
    QueueSpec queue;
    queue.name = "tenants";
    queue.batch = batch;
    queue.max_backlog = max_backlog;
    queue.extra_lines = {"group_by: tenant"};
    return queue;
}

// Each key's push times (server us), one per row, in order.
std::map<int, std::vector<std::int64_t>> push_times_by_key(const PushMonitor& monitor, int keys) {
    std::map<int, std::vector<std::int64_t>> times;
    for (const auto& push : monitor.pushes()) {
        for (const auto& task : parse_ready_all(push.messages))
            times[key_of(task.id, keys)].push_back(push.micros);
    }
    return times;
}

// The shortest span, in us, over which some key had `count` + 1 rows pushed: at or above the
// period means no key ever had more than `count` rows within one period.
std::int64_t tightest_span(const std::map<int, std::vector<std::int64_t>>& times, int count) {
    std::int64_t span = INT64_MAX;
    for (const auto& [key, t] : times) {
        for (std::size_t i = static_cast<std::size_t>(count); i < t.size(); ++i)
            span = std::min(span, t[i] - t[i - static_cast<std::size_t>(count)]);
    }
    return span;
}

std::map<int, int> ready_by_key(rowpump::redis::Connection& redis, int keys) {
    std::map<int, int> counts;
    for (const auto& task : parse_ready_all(list_all(redis, ready_key("tenants"))))
        ++counts[key_of(task.id, keys)];
    return counts;
}

RunResult limit_cli(const std::string& config, std::vector<std::string> args) {
    std::vector<std::string> argv = {"limit"};
    argv.push_back(args[0]);
    argv.push_back("-c");
    argv.push_back(config);
    argv.insert(argv.end(), args.begin() + 1, args.end());
    return rowpump_cli(argv);
}

}  // namespace

// rate_per_key: 2/1s over 3 keys with 60 due rows each, batches of 10: no key ever has 3 rows
// pushed within 1 s of the Redis clock, through a kill -9 of the leader, a restart at once,
// and a stand-by taking over from a leader that stops; every row pushed once.
TEST_CASE("rate_per_key holds on the Redis clock across kill -9 and a takeover",
          "[dispatcher][group_by][key_limits]") {
    constexpr int kKeys = 3;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_keys(db, 60 * kKeys, kKeys);
    auto queue = keyed_queue(10, 100000);
    queue.extra_lines.push_back("rate_per_key: 2/1s");
    // A killed leader's lock expires well inside the period: the keys' windows are what hold.
    queue.extra_lines.push_back("leader_timeout: 300ms");
    const std::string config = bed.write_config({queue});
    migrate_apply(config);

    PushMonitor monitor(bed.redis_client(), ready_key("tenants"));
    int started = 0;
    auto start = [&] {
        return bed.start_dispatcher(config, "dispatcher-" + std::to_string(++started) + ".log");
    };
    auto leader = start();
    REQUIRE(monitor.wait_for(2, 20s));
    for (int round = 0; round < 2; ++round) {
        leader->process().kill();  // kill -9, and start again at once
        leader = start();
        REQUIRE(monitor.wait_for(2, 20s));
        auto standby = start();
        REQUIRE(eventually(
            10s, [&] { return standby->log().find("standing by") != std::string::npos; }));
        leader->signal(SIGTERM);
        REQUIRE(leader->wait(5s));
        leader = std::move(standby);
        REQUIRE(monitor.wait_for(2, 20s));
    }
    const auto times = push_times_by_key(monitor, kKeys);
    std::size_t rows = 0;
    for (const auto& [key, t] : times) rows += t.size();
    const auto span = tightest_span(times, 2);
    INFO("pushes: " << monitor.pushes().size() << ", rows " << rows
                    << ", shortest span of 3 rows of one key: " << span << " us");
    REQUIRE(times.size() == kKeys);  // every key got rows: none starved
    CHECK(span >= 1000000);
    CHECK(span < 2000000);  // the keys were held at their limit, not merely slow
    const auto messages = monitor.messages();
    std::set<std::string> ids;
    for (const auto& task : parse_ready_all(messages)) ids.insert(task.id);
    CHECK(ids.size() == messages.size());  // nothing pushed twice
}

// An override set while the dispatcher runs: key 1 starts at rate_per_key 1/500ms like the
// others, then `rowpump limit set tenants 1 rate 1000/1s` lets 20 of its rows through within
// 500 ms of the Redis clock, while keys 2 and 3 stay at theirs.
TEST_CASE("rowpump limit set changes a key's rate at run time",
          "[dispatcher][group_by][key_limits]") {
    constexpr int kKeys = 3;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_keys(db, 100 * kKeys, kKeys);
    auto queue = keyed_queue(30, 100000);
    queue.extra_lines.push_back("rate_per_key: 1/500ms");
    const std::string config = bed.write_config({queue});
    migrate_apply(config);

    PushMonitor monitor(bed.redis_client(), ready_key("tenants"));
    auto dispatcher = bed.start_dispatcher(config);
    REQUIRE(monitor.wait_for(3, 20s));
    const auto before = push_times_by_key(monitor, kKeys);
    CHECK(tightest_span(before, 1) >= 500000);  // key 1 too, before the override

    const auto set = limit_cli(config, {"set", "tenants", "1", "rate", "1000/1s"});
    REQUIRE(set.status.success());
    CHECK(set.out.find("rate=1000/1s") != std::string::npos);
    const auto list = limit_cli(config, {"list", "tenants"});
    CHECK(list.out.find("1\trate=1000/1s") != std::string::npos);

    // Key 1's 100 rows all go; keys 2 and 3 still at most 1 per 500 ms.
    REQUIRE(eventually(20s, [&] {
        monitor.wait_for(1, 2s);
        return push_times_by_key(monitor, kKeys)[1].size() == 100;
    }));
    auto times = push_times_by_key(monitor, kKeys);
    const auto fast = times[1];
    std::int64_t tightest_20 = INT64_MAX;
    for (std::size_t i = 19; i < fast.size(); ++i)
        tightest_20 = std::min(tightest_20, fast[i] - fast[i - 19]);
    INFO("key 1: 20 rows within " << tightest_20 << " us");
    CHECK(tightest_20 < 500000);
    times.erase(1);
    CHECK(tightest_span(times, 1) >= 500000);

    // unset: key 1 back to the queue's rate (nothing left to push of it; the CLI says so).
    const auto unset = limit_cli(config, {"unset", "tenants", "1"});
    CHECK(unset.status.success());
    CHECK(unset.out.find("back to the queue's limits") != std::string::npos);
}

// A concurrency override at run time: no worker runs, so every row pushed stays in flight. Key
// 1 starts with `concurrency 3` (set before the dispatcher starts), the other keys unlimited;
// raised to 6 while it runs, key 1 has 6 rows in flight and no more, even after further claims
// (new rows of key 2 pushed after the change).
TEST_CASE("rowpump limit set changes a key's concurrency at run time",
          "[dispatcher][group_by][key_limits]") {
    constexpr int kKeys = 2;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_keys(db, 40, kKeys);  // 20 rows each
    const std::string config = bed.write_config({keyed_queue(10, 100000)});
    migrate_apply(config);
    REQUIRE(limit_cli(config, {"set", "tenants", "1", "concurrency", "3"}).status.success());
    auto dispatcher = bed.start_dispatcher(config);
    auto redis = bed.redis_client();
    REQUIRE(eventually(20s, [&] { return ready_by_key(redis, kKeys)[2] == 20; }));
    REQUIRE(eventually(5s, [&] { return ready_by_key(redis, kKeys)[1] == 3; }));

    REQUIRE(limit_cli(config, {"set", "tenants", "1", "concurrency", "6"}).status.success());
    REQUIRE(eventually(20s, [&] { return ready_by_key(redis, kKeys)[1] == 6; }));
    // 10 more rows of key 2 (odd ids): pushed only by claims after the change.
    db.exec(
        "INSERT INTO user_block_status (user_id, updated_time, tenant) SELECT 1001 + 2 * seq, "
        "NOW(3) - INTERVAL 1 DAY, 2 FROM seq_1_to_10");
    REQUIRE(eventually(20s, [&] { return ready_by_key(redis, kKeys)[2] == 30; }));
    CHECK(ready_by_key(redis, kKeys)[1] == 6);
}

// Weights: key 1 weight 3, key 2 weight 1 (the default), 200 due rows each; one claim of 40
// (max_backlog 40, no worker) shares 30 to key 1 and 10 to key 2. The control without the
// weight: 20 each.
TEST_CASE("weights shift a key's share of the claim", "[dispatcher][group_by][key_limits]") {
    constexpr int kKeys = 2;
    for (const bool weighted : {true, false}) {
        DYNAMIC_SECTION((weighted ? "key 1 weight 3" : "no weights")) {
            TestBed bed;
            MysqlClient db = bed.db();
            seed_keys(db, 400, kKeys);
            const std::string config = bed.write_config({keyed_queue(40, 40)});
            migrate_apply(config);
            if (weighted) {
                REQUIRE(limit_cli(config, {"set", "tenants", "1", "weight", "3"}).status.success());
            }
            auto dispatcher = bed.start_dispatcher(config);
            auto redis = bed.redis_client();
            REQUIRE(
                eventually(20s, [&] { return list_length(redis, ready_key("tenants")) == 40; }));
            const auto counts = ready_by_key(redis, kKeys);
            INFO("rows in the ready list: key 1 " << counts.at(1) << ", key 2 " << counts.at(2));
            const int expected = weighted ? 30 : 20;
            CHECK(std::abs(counts.at(1) - expected) <= 2);
            CHECK(counts.at(1) + counts.at(2) == 40);
        }
    }
}

// Bad input: the CLI refuses it with a clear error and exit 2 (1 for a queue it cannot use),
// writing nothing; a bad value written straight into the hash is logged, naming the key, and
// that key keeps the queue's limits while the others' overrides apply and every row goes.
TEST_CASE("bad per-key limits get clear errors and never break other keys",
          "[dispatcher][group_by][key_limits]") {
    constexpr int kKeys = 3;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_keys(db, 30, kKeys);
    db.exec(
        "CREATE TABLE plain_rows (user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL DEFAULT 0, "
        "updated_time DATETIME(3) NOT NULL, KEY (updated_time)) ENGINE=InnoDB");
    QueueSpec plain;
    plain.name = "plain";
    plain.table = "plain_rows";
    const std::string config = bed.write_config({keyed_queue(10, 100000), plain});
    migrate_apply(config);

    struct Bad {
        std::vector<std::string> args;
        int code;
        std::string says;
    };
    const std::vector<Bad> bad = {
        {{"set", "tenants", "1", "rate", "fast"}, 2, "a rate is N/period"},
        {{"set", "tenants", "1", "rate", "0/1s"}, 2, "a rate is N/period"},
        {{"set", "tenants", "1", "weight", "0"}, 2, "weight is a whole number from 1 to 1000"},
        {{"set", "tenants", "1", "weight", "1001"}, 2, "weight is a whole number from 1 to 1000"},
        {{"set", "tenants", "1", "concurrency", "3x"}, 2, "concurrency is a whole number"},
        {{"set", "tenants", "1", "speed", "3"}, 2, "unknown limit"},
        {{"set", "tenants", "1", "weight"}, 2, "pairs"},
        {{"set", "tenants", "1", "weight", "2", "weight", "3"}, 2, "weight given twice"},
        {{"set", "tenants", std::string(256, 'k'), "weight", "2"}, 2, "1 to 255 bytes, got 256"},
        {{"set", "nosuch", "1", "weight", "2"}, 1, "unknown queue 'nosuch'"},
        {{"set", "plain", "1", "weight", "2"}, 1, "has no group_by"},
    };
    auto redis = bed.redis_client();
    for (const auto& b : bad) {
        const auto result = limit_cli(config, b.args);
        INFO(result.describe());
        CHECK(result.status.exited());
        CHECK(result.status.code() == b.code);
        CHECK(result.err.find(b.says) != std::string::npos);
    }
    CHECK(redis.command({"EXISTS", "rowpump:{tenants}:key_limits"}).integer() == 0);

    // Straight into the hash: a bad value for key 2, a key too long; key 3 a good override.
    redis.command({"HSET", "rowpump:{tenants}:key_limits", "2", "rate=banana",
                   std::string(300, 'x'), "weight=2", "3", "weight=2"});
    const auto list = limit_cli(config, {"list", "tenants"});
    CHECK(list.status.success());
    CHECK(list.out.find("2\trate=banana\t(refused: 'rate=banana': a rate is N/period") !=
          std::string::npos);
    CHECK(list.out.find("3\tweight=2\n") != std::string::npos);

    auto dispatcher = bed.start_dispatcher(config);
    REQUIRE(eventually(20s, [&] { return list_length(redis, ready_key("tenants")) == 30; }));
    CHECK(dispatcher->log_count("key '2' (value 'rate=banana')") == 1);  // once, not per reload
    CHECK(dispatcher->log_count("a key is 1 to 255 bytes") == 1);

    // The hash of the wrong type: logged, the queue goes on.
    redis.command({"DEL", "rowpump:{tenants}:key_limits"});
    redis.command({"SET", "rowpump:{tenants}:key_limits", "oops"});
    db.exec(
        "INSERT INTO user_block_status (user_id, updated_time, tenant) SELECT 1000 + seq, "
        "NOW(3) - INTERVAL 1 DAY, 1 + seq % 3 FROM seq_1_to_9");
    REQUIRE(eventually(20s, [&] { return list_length(redis, ready_key("tenants")) == 39; }));
    REQUIRE(eventually(10s, [&] { return dispatcher->log_count("WRONGTYPE") >= 1; }));
    CHECK(dispatcher->running());
}
