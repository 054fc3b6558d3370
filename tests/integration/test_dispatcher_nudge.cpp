// Nudges: a producer that committed a due row wakes the leading dispatcher, which claims at
// once instead of waiting out its poll interval.

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/nudge.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/log_lines.hpp"
#include "rowpump/testing/protocol_worker.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/seed.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

bool log_contains(const Dispatcher& d, const std::string& text) {
    return d.log().find(text) != std::string::npos;
}

// Connections subscribed to one channel each (the dispatchers' nudge listeners).
std::int64_t subscribers(rowpump::redis::Connection& redis) {
    const auto clients = redis.command({"CLIENT", "LIST", "TYPE", "pubsub"}).string();
    std::int64_t count = 0;
    for (auto at = clients.find(" sub=1 "); at != std::string::npos;
         at = clients.find(" sub=1 ", at + 1))
        ++count;
    return count;
}

// Claim UPDATEs run so far (the claim joins the rows it picks: a multi-table UPDATE), read
// with SHOW STATUS, which counts as neither.
std::int64_t claim_updates(MysqlClient& db) {
    return std::stoll(
        *db.rows("SHOW GLOBAL STATUS WHERE Variable_name = 'Com_update_multi'").at(0).at(1));
}

// A queue whose leader, once it has claimed, sleeps longer than any test here runs: its poll
// interval and its lock renewal (leader_timeout / 3) are far off, so within the test only a
// nudge can start a claim. The waits below are guards, much shorter than the poll interval.
QueueSpec sleepy_queue() {
    QueueSpec queue;
    queue.poll_min = "10m";
    queue.poll_max = "10m";
    queue.extra_lines = {"leader_timeout: 1h"};
    return queue;
}

}  // namespace

TEST_CASE("a nudge gets a due row claimed at once, not at the next poll", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    create_user_block_status(db);
    const std::string config = bed.write_config({sleepy_queue()});
    migrate_apply(config);
    const auto claims_before = claim_updates(db);
    auto [leader, standby] = bed.start_leader_and_standby(config);

    rowpump::redis::Connection redis = bed.redis_client();
    const auto keys = rowpump::protocol::keys_for("users");
    // Both listen; only the leader claims.
    REQUIRE(eventually(10s, [&] { return subscribers(redis) == 2; }));
    // The leader's first claim, on taking the lead, has run: the next poll is 10 min away.
    REQUIRE(eventually(10s, [&] { return claim_updates(db) > claims_before; }));
    rowpump::RedisAddress address;
    address.port = bed.redis.port();

    // With the SDK.
    insert_users(db, 1, 1);
    rowpump::nudge(address, "users");
    REQUIRE(eventually(30s, [&] { return list_length(redis, keys.ready) == 1; }));

    // With the raw command of the protocol, and many nudges at once.
    insert_users(db, 2, 3);
    for (int i = 0; i < 20; ++i) redis.command({"PUBLISH", keys.nudge, "1"});
    REQUIRE(eventually(30s, [&] { return list_length(redis, keys.ready) == 4; }));

    rowpump::Nudger nudger(address, "users");
    insert_users(db, 5, 1);
    nudger.nudge();
    REQUIRE(eventually(30s, [&] { return list_length(redis, keys.ready) == 5; }));
    // Each row was pushed once, by the leader, in one claim per nudged round.
    CHECK(parse_ready_all(list_all(redis, keys.ready)).size() == 5);
    CHECK(log_lines(leader->log(), [](const auto&, const auto& text) {
              return text.find("dispatched") != std::string::npos;
          }).size() == 3);
    CHECK_FALSE(log_contains(*standby, "dispatched"));
}

TEST_CASE("a cycle a nudge started pushes the new row before it applies outcomes", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    create_user_block_status(db);
    const std::string config = bed.write_config({sleepy_queue()});
    migrate_apply(config);
    const auto claims_before = claim_updates(db);
    const auto dispatcher = bed.start_dispatcher(config);
    rowpump::redis::Connection redis = bed.redis_client();
    const auto keys = rowpump::protocol::keys_for("users");
    REQUIRE(eventually(10s, [&] { return subscribers(redis) == 1; }));
    REQUIRE(eventually(10s, [&] { return claim_updates(db) > claims_before; }));

    insert_users(db, 1, 1);
    redis.command({"PUBLISH", keys.nudge, "1"});
    REQUIRE(eventually(10s, [&] { return list_length(redis, keys.ready) == 1; }));
    {  // row 1's outcome waits in the done list while the dispatcher sleeps
        ProtocolWorkerOptions options;
        options.redis.port = bed.redis.port();
        ProtocolWorker worker(options);
        REQUIRE(eventually(10s, [&] { return list_length(redis, keys.done) == 1; }));
    }
    insert_users(db, 2, 1);
    redis.command({"PUBLISH", keys.nudge, "1"});
    REQUIRE(eventually(10s, [&] {
        return list_length(redis, keys.ready) == 1 && list_length(redis, keys.done) == 0;
    }));

    // One cycle read row 1's outcome and claimed row 2: the claim and push came first.
    std::vector<std::string> steps;
    for (const auto& line : log_lines(dispatcher->log(), [](const auto&, const auto& text) {
             return text.find("dispatched") != std::string::npos ||
                    text.find("applied a batch") != std::string::npos;
         })) {
        steps.push_back(line.find("dispatched") != std::string::npos ? "push" : "apply");
    }
    CHECK(steps == std::vector<std::string>{"push", "push", "apply"});
    CHECK(db.scalar("SELECT status FROM user_block_status WHERE user_id = 1") == 1);
}

TEST_CASE("nudging a queue whose name cannot be one is an error", "[worker]") {
    CHECK_THROWS_WITH(rowpump::Nudger(rowpump::RedisAddress{}, "no spaces"),
                      Catch::Contains("queue 'no spaces' must be 1 to 64 characters"));
}
