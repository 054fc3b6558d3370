// The dispatch cycle against real servers: every due row pushed exactly once, new rows
// picked up, leases honoured, max_backlog and rate never exceeded.

#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/seed.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;
using rowpump::Task;

namespace {

std::set<std::string> ids_of(const std::vector<Task>& tasks) {
    std::set<std::string> ids;
    for (const auto& t : tasks) ids.insert(t.id);
    return ids;
}

std::set<std::string> id_range(std::int64_t first, std::int64_t count) {
    std::set<std::string> ids;
    for (std::int64_t id = first; id < first + count; ++id) ids.insert(std::to_string(id));
    return ids;
}

// SIGTERM, and the dispatcher must be gone with exit code 0 soon after.
void stop_dispatcher(Dispatcher& dispatcher) {
    dispatcher.signal(SIGTERM);
    std::optional<ExitStatus> status = dispatcher.wait(5s);
    INFO("dispatcher log tail:\n" << dispatcher.log_tail());
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
}

}  // namespace

TEST_CASE("100000 due rows are all pushed exactly once with the token MySQL holds",
          "[dispatcher]") {
    constexpr std::int64_t kRows = 100000;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, kRows);
    QueueSpec queue;
    queue.batch = 1000;
    queue.lease = "10m";
    queue.max_backlog = 200000;
    std::string config = bed.write_config({queue});
    migrate_apply(config);

    auto dispatcher = bed.start_dispatcher(config);
    rowpump::redis::Connection redis = bed.redis_client();
    const std::string key = ready_key("users");
    bool all_claimed_and_pushed = eventually(
        50s,
        [&] {
            return list_length(redis, key) >= kRows &&
                   db.scalar("SELECT COUNT(*) FROM user_block_status WHERE rp_token IS NULL") == 0;
        },
        100ms);
    INFO("ready list length " << list_length(redis, key));
    REQUIRE(all_claimed_and_pushed);
    stop_dispatcher(*dispatcher);  // from here on the list can no longer change

    std::vector<Task> tasks = parse_ready_all(list_all(redis, key));
    CHECK(tasks.size() == static_cast<std::size_t>(kRows));
    std::unordered_map<std::string, std::string> token_by_id;
    std::unordered_set<std::string> tokens;
    std::size_t duplicate_ids = 0, duplicate_tokens = 0, bad_tokens = 0;
    for (const auto& t : tasks) {
        duplicate_ids += token_by_id.emplace(t.id, t.token).second ? 0 : 1;
        duplicate_tokens += tokens.insert(t.token).second ? 0 : 1;
        bad_tokens += rowpump::protocol::is_valid_token(t.token) && t.attempt == 1 ? 0 : 1;
    }
    CHECK(duplicate_ids == 0);
    CHECK(duplicate_tokens == 0);
    CHECK(bad_tokens == 0);

    auto stored = db.map("SELECT user_id, rp_token FROM user_block_status");
    REQUIRE(stored.size() == static_cast<std::size_t>(kRows));
    std::size_t mismatches = 0;
    std::string example;
    for (const auto& [id, token] : stored) {
        auto pushed = token_by_id.find(id);
        if (pushed == token_by_id.end() || !token || pushed->second != *token) {
            if (mismatches++ == 0)
                example = "row " + id + " stored token " + token.value_or("NULL");
        }
    }
    INFO("first mismatch: " << example);
    CHECK(mismatches == 0);
}

TEST_CASE("rows inserted while the dispatcher runs are dispatched", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 100);
    std::string config = bed.write_config();
    migrate_apply(config);
    auto dispatcher = bed.start_dispatcher(config);
    rowpump::redis::Connection redis = bed.redis_client();
    const std::string key = ready_key("users");
    REQUIRE(eventually(20s, [&] { return list_length(redis, key) == 100; }));

    insert_users(db, 1001, 50);                               // due now
    insert_users(db, 2001, 1, "NOW(3) - INTERVAL 9 SECOND");  // due in a second
    insert_users(db, 3001, 1, "NOW(3) + INTERVAL 1 HOUR");    // not due
    std::set<std::string> expected = id_range(1, 100);
    for (const auto& id : id_range(1001, 50)) expected.insert(id);
    expected.insert("2001");
    bool all_there = eventually(
        20s, [&] { return ids_of(parse_ready_all(list_all(redis, key))) == expected; }, 50ms);
    INFO("ready list length " << list_length(redis, key));
    CHECK(all_there);
    stop_dispatcher(*dispatcher);

    std::vector<Task> tasks = parse_ready_all(list_all(redis, key));
    CHECK(tasks.size() == expected.size());  // nothing twice
    CHECK(ids_of(tasks) == expected);        // 3001 never: it is not due
    CHECK_FALSE(db.scalar_string("SELECT rp_token FROM user_block_status WHERE user_id = 3001"));
}

TEST_CASE("a row whose lease expired is dispatched again and a leased one is not", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 3);
    std::string config = bed.write_config();
    migrate_apply(config);
    const std::string expired_token = "00000000000000AA-1-1";
    const std::string leased_token = "00000000000000BB-1-2";
    db.exec("UPDATE user_block_status SET rp_token = '" + expired_token +
            "', rp_lease_until = NOW(3) - INTERVAL 1 MINUTE WHERE user_id = 1");
    db.exec("UPDATE user_block_status SET rp_token = '" + leased_token +
            "', rp_lease_until = NOW(3) + INTERVAL 1 HOUR WHERE user_id = 2");

    auto dispatcher = bed.start_dispatcher(config);
    rowpump::redis::Connection redis = bed.redis_client();
    const std::string key = ready_key("users");
    auto ready_ids = [&] { return ids_of(parse_ready_all(list_all(redis, key))); };
    REQUIRE(eventually(20s, [&] { return ready_ids() == std::set<std::string>{"1", "3"}; }));
    // A row inserted now can only be pushed by a later claim, which must skip row 2 as well.
    insert_users(db, 4, 1);
    REQUIRE(eventually(20s, [&] { return ready_ids().count("4") == 1; }));
    stop_dispatcher(*dispatcher);

    std::vector<Task> tasks = parse_ready_all(list_all(redis, key));
    CHECK(ids_of(tasks) == std::set<std::string>{"1", "3", "4"});
    CHECK(tasks.size() == 3);
    CHECK(db.scalar_string("SELECT rp_token FROM user_block_status WHERE user_id = 2") ==
          leased_token);
    auto row1 = db.scalar_string("SELECT rp_token FROM user_block_status WHERE user_id = 1");
    REQUIRE(row1);
    CHECK(*row1 != expired_token);
    for (const auto& t : tasks) {
        if (t.id == "1") CHECK(t.token == *row1);
    }
}

TEST_CASE("the ready list never grows past max_backlog", "[dispatcher]") {
    constexpr std::int64_t kRows = 5000;
    constexpr std::int64_t kMaxBacklog = 500;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, kRows);
    QueueSpec queue;
    queue.batch = 200;
    queue.max_backlog = kMaxBacklog;
    queue.lease = "10m";
    std::string config = bed.write_config({queue});
    migrate_apply(config);

    auto dispatcher = bed.start_dispatcher(config);
    ConsumerOptions pace;
    pace.redis = bed.redis.options();
    pace.queue = "users";
    pace.per_pop = 5;
    pace.pause = 5ms;
    Consumer consumer(pace);
    rowpump::redis::Connection redis = bed.redis_client();
    const std::string key = ready_key("users");
    std::int64_t max_seen = 0;
    std::size_t samples = 0;
    bool drained = eventually(
        50s,
        [&] {
            max_seen = std::max(max_seen, list_length(redis, key));
            ++samples;
            return consumer.count() >= static_cast<std::size_t>(kRows);
        },
        2ms);
    consumer.stop();
    INFO("samples " << samples << ", largest LLEN seen " << max_seen << ", popped "
                    << consumer.count());
    CHECK(drained);
    CHECK(samples >= 300);
    CHECK(max_seen <= kMaxBacklog);
    CHECK(max_seen >= 300);  // the backlog was actually reached: the test could have failed
    CHECK(consumer.count() == static_cast<std::size_t>(kRows));
    CHECK(consumer.ids() == id_range(1, kRows));
    stop_dispatcher(*dispatcher);
}
