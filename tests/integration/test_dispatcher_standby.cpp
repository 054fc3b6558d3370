// What a dispatcher costs when there is nothing to do, and what a second one does while
// the first holds the queue.

#include <signal.h>

#include <set>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "support/eventually.hpp"
#include "support/queue_redis.hpp"
#include "support/seed.hpp"
#include "support/test_bed.hpp"

using namespace rowpump::test;

namespace {

std::int64_t mysql_status(MysqlClient& db, const std::string& name) {
    return std::stoll(*db.scalar_string(
        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '" + name + "'"));
}

std::int64_t redis_commands(rowpump::redis::Connection& redis) {
    const std::string info = redis.command({"INFO", "stats"}).string();
    const std::string field = "total_commands_processed:";
    return std::stoll(info.substr(info.find(field) + field.size()));
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
    // The idle back-off climbs from 50 ms to 1 s within 2 s; measure the 4 s after that.
    std::this_thread::sleep_for(2s);
    const auto selects_before = mysql_status(db, "COM_SELECT");
    const auto updates_before = mysql_status(db, "COM_UPDATE");
    const auto redis_before = redis_commands(redis);
    const auto started = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(4s);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    // Minus this test's own two status reads after the first one (each counts itself).
    const double selects_per_s =
        static_cast<double>(mysql_status(db, "COM_SELECT") - selects_before - 2) / seconds;
    const double updates_per_s = static_cast<double>(mysql_status(db, "COM_UPDATE") - updates_before) / seconds;
    // Minus the one INFO call of this test.
    const double redis_per_s = static_cast<double>(redis_commands(redis) - redis_before - 1) / seconds;
    INFO("claim UPDATEs/s " << updates_per_s << ", SELECTs/s " << selects_per_s << ", Redis commands/s "
                             << redis_per_s);
    // Per poll.max (1 s): one plain SELECT (lease end, anything expired?) and one sweep UPDATE;
    // the UPDATE for expired rows runs only when that SELECT finds some.
    CHECK(updates_per_s <= 1.5);
    CHECK(selects_per_s <= 1.5);
    CHECK(redis_per_s <= 6.0);
    CHECK(list_length(redis, ready_key("users")) == 0);
}

TEST_CASE("a second dispatcher stands by and takes over when the leader stops", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    create_user_block_status(db);
    const std::string config = bed.write_config();
    migrate_apply(config);

    auto leader = bed.start_dispatcher(config, "leader.log");
    REQUIRE(eventually(10s, [&] { return log_contains(*leader, "took the leader lock"); }));
    auto standby = bed.start_dispatcher(config, "standby.log");
    REQUIRE(eventually(10s, [&] { return log_contains(*standby, "standing by"); }));

    rowpump::redis::Connection redis = bed.redis_client();
    const std::string key = ready_key("users");
    insert_users(db, 1, 500);
    REQUIRE(eventually(20s, [&] { return list_length(redis, key) == 500; }));

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
