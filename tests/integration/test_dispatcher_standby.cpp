// What a dispatcher costs when there is nothing to do, and what a second one does while
// the first holds the queue.

#include <signal.h>

#include <chrono>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/seed.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

std::int64_t mysql_status(MysqlClient& db, const std::string& name) {
    return std::stoll(*db.scalar_string(
        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '" +
        name + "'"));
}

std::int64_t redis_commands(rowpump::redis::Connection& redis) {
    const std::string info = redis.command({"INFO", "stats"}).string();
    const std::string field = "total_commands_processed:";
    return std::stoll(info.substr(info.find(field) + field.size()));
}

// COM_UPDATE and COM_UPDATE_MULTI read with SHOW STATUS, which counts as COM_SHOW_STATUS:
// watching the polls this way adds nothing to the SELECTs the test measures. Idle, each poll
// runs one sweep UPDATE (a multi-table one: the claim joins the rows it picked).
std::int64_t sweep_updates(MysqlClient& db) {
    std::int64_t updates = 0;
    for (const auto& row :
         db.rows("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_update', 'Com_update_multi')"))
        updates += std::stoll(*row.at(1));
    return updates;
}

// True once no sweep UPDATE has run for `quiet`; false if that does not happen within `timeout`.
bool polls_settle(MysqlClient& db, std::chrono::milliseconds quiet,
                  std::chrono::milliseconds timeout) {
    auto updates = sweep_updates(db);
    auto last_change = std::chrono::steady_clock::now();
    return eventually(timeout, [&] {
        const auto now = std::chrono::steady_clock::now();
        if (const auto seen = sweep_updates(db); seen != updates) {
            updates = seen;
            last_change = now;
        }
        return now - last_change >= quiet;
    });
}

bool log_contains(const Dispatcher& d, const std::string& text) {
    return d.log().find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("an idle dispatcher costs a few cheap queries per second", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    create_user_block_status(db);
    insert_users(db, 1, 1000, "NOW(3)");  // rows that are not due for another 10 s
    QueueSpec queue;
    queue.poll_min = "50ms";
    queue.poll_max = "1s";
    const std::string config = bed.write_config({queue});
    migrate_apply(config);
    auto dispatcher = bed.start_dispatcher(config);
    REQUIRE(eventually(10s, [&] { return log_contains(*dispatcher, "took the leader lock"); }));

    rowpump::redis::Connection redis = bed.redis_client();
    // The idle back-off climbs from 50 ms to poll.max (1 s): wait until the polls are that far
    // apart. A dispatcher that never backs off fails here.
    REQUIRE(polls_settle(db, 900ms, 10s));
    // Measure over four polls, from just after one sweep UPDATE to just after the fourth
    // next. The dispatcher must go on polling: one that stops fails here, not measured.
    const auto updates_seen = sweep_updates(db);
    REQUIRE(eventually(10s, [&] { return sweep_updates(db) > updates_seen; }));
    const auto selects_before = mysql_status(db, "COM_SELECT");
    const auto updates_before = sweep_updates(db);
    const auto redis_before = redis_commands(redis);
    const auto started = std::chrono::steady_clock::now();
    REQUIRE(eventually(20s, [&] { return sweep_updates(db) >= updates_before + 4; }));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    // Minus this test's own two status reads after the first one (each counts itself).
    const auto selects = mysql_status(db, "COM_SELECT") - selects_before - 2;
    const auto updates = sweep_updates(db) - updates_before;
    // Minus the one INFO call of this test.
    const auto redis_commands_run = redis_commands(redis) - redis_before - 1;
    const double selects_per_s = static_cast<double>(selects) / seconds;
    const double updates_per_s = static_cast<double>(updates) / seconds;
    const double redis_per_s = static_cast<double>(redis_commands_run) / seconds;
    INFO(updates << " claim UPDATEs, " << selects << " SELECTs, " << redis_commands_run
                 << " Redis commands in " << seconds << " s: " << updates_per_s << ", "
                 << selects_per_s << ", " << redis_per_s << " a second");
    // Per poll.max (1 s): one plain SELECT (lease end, anything expired?) and one sweep UPDATE;
    // the UPDATE for expired rows runs only when that SELECT finds some. In Redis, per poll:
    // EXISTS (pause) pipelined with the take_done script (EVALSHA and its LINDEX), LLEN; per
    // reap_interval (1 s) SMEMBERS and TIME (the Redis clock watch); the lead script (its GET,
    // SET and the epoch's GET) every 1.5 s; the due count's four commands
    // every 5 s.
    // Each of the polls counted made its reads: a poll that skipped them would cost less.
    CHECK(selects >= updates);
    CHECK(redis_commands_run >= 3 * updates);
    // And no more than that: the window is at least four idle sleeps of poll.max long
    // (the polls settled above), so these are rates of a dispatcher backed off to 1 s.
    CHECK(updates_per_s <= 1.5);
    // Counted, not timed (the window ends at an UPDATE, a hair short of four polls): besides one
    // per poll, at most one due count (every 5 s) and one clock reading of the lease keeper's
    // look (every lease/8).
    CHECK(selects <= updates + 2);
    CHECK(redis_per_s <= 10);
    CHECK(list_length(redis, ready_key("users")) == 0);
    // All along, the dispatcher listened for nudges: a subscribed connection sends nothing.
    const auto listening = redis.command({"CLIENT", "LIST", "TYPE", "pubsub"}).string();
    CHECK(listening.find("sub=1") != std::string::npos);
}

TEST_CASE("a second dispatcher stands by and takes over when the leader stops", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    create_user_block_status(db);
    const std::string config = bed.write_config();
    migrate_apply(config);

    auto [leader, standby] = bed.start_leader_and_standby(config);

    rowpump::redis::Connection redis = bed.redis_client();
    const std::string key = ready_key("users");
    insert_users(db, 1, 500);
    REQUIRE(eventually(20s, [&] { return list_length(redis, key) == 500; }));
    // Only the leader claimed and pushed.
    CHECK(eventually(5s, [&] { return log_contains(*leader, "dispatched"); }));
    CHECK_FALSE(log_contains(*standby, "dispatched"));

    leader->signal(SIGTERM);
    REQUIRE(leader->wait(5s));
    REQUIRE(eventually(10s, [&] { return log_contains(*standby, "took the leader lock"); }));
    insert_users(db, 501, 500);
    REQUIRE(eventually(20s, [&] { return list_length(redis, key) == 1000; }));

    // Each row was pushed once, by whichever dispatcher was leading at the time.
    std::set<std::string> ids;
    for (const auto& task : parse_ready_all(list_all(redis, key))) ids.insert(task.id);
    CHECK(ids.size() == 1000);
    // The log line follows the push, so it may trail the list by a moment.
    CHECK(eventually(5s, [&] { return log_contains(*standby, "dispatched"); }));
}
