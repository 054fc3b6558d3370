// Faults: servers restarted under the dispatcher, a server down at start, SIGTERM mid-run.
// Every test ends by checking data: no due row is left behind.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/seed.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

std::set<std::string> id_range(std::int64_t first, std::int64_t count) {
    std::set<std::string> ids;
    for (std::int64_t id = first; id < first + count; ++id) ids.insert(std::to_string(id));
    return ids;
}

std::size_t count_missing(const std::set<std::string>& expected,
                          const std::set<std::string>& seen) {
    std::size_t missing = 0;
    for (const auto& id : expected) missing += seen.count(id) == 0 ? 1 : 0;
    return missing;
}

ConsumerOptions paced_consumer(const TestBed& bed, const std::string& queue) {
    ConsumerOptions options;
    options.redis = bed.redis.options();
    options.queue = queue;
    options.per_pop = 10;
    options.pause = 10ms;
    options.report_ok = true;
    options.ok_values = {{"status", "1"}};
    return options;
}

}  // namespace

TEST_CASE("Redis and MySQL restarted mid-run: the dispatcher recovers and no row is left behind",
          "[dispatcher]") {
    constexpr std::int64_t kRows = 3000;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, kRows);
    QueueSpec queue;
    queue.due = "status = 0 AND updated_time < NOW(3) - INTERVAL 10 SECOND";  // done rows stay done
    queue.batch = 100;
    queue.max_backlog = 300;
    queue.lease = "2s";
    std::string config = bed.write_config({queue});
    migrate_apply(config);

    auto dispatcher = bed.start_dispatcher(config);
    Consumer consumer(paced_consumer(bed, "users"));
    auto received = [&](std::size_t n) {
        return [&consumer, n] { return consumer.ids().size() >= n; };
    };

    REQUIRE(eventually(30s, received(600)));
    bed.redis.kill();  // the ready list and every unapplied done report are gone
    bed.redis.start();
    REQUIRE(eventually(30s, received(1500)));
    bed.mysql.kill();  // kill -9 mariadbd: InnoDB recovers on start
    bed.mysql.start();

    std::set<std::string> all = id_range(1, kRows);
    bool everything = eventually(
        45s, [&] { return count_missing(all, consumer.ids()) == 0; }, 50ms);
    INFO("ids received " << consumer.ids().size() << " of " << kRows << ", messages "
                         << consumer.count() << ", consumer errors " << consumer.errors());
    CHECK(everything);
    CHECK(dispatcher->running());

    // The done reports lost with Redis are re-sent after the lease: every row ends up done.
    MysqlClient db2 = bed.db();  // the first session died with the server
    bool all_done = eventually(
        30s,
        [&] { return db2.scalar("SELECT COUNT(*) FROM user_block_status WHERE status <> 1") == 0; },
        100ms);
    INFO("rows not done: " << db2.scalar(
             "SELECT COUNT(*) FROM user_block_status WHERE status <> 1"));
    CHECK(all_done);
    CHECK(dispatcher->running());
    consumer.stop();
}

TEST_CASE("SIGTERM mid-run: exit 0 within 1.5 s and no row claimed without being pushed",
          "[dispatcher]") {
    constexpr std::int64_t kRows = 50000;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, kRows);
    QueueSpec queue;
    queue.batch = 50;
    queue.lease = "10s";  // long enough that nothing is re-dispatched before the checks
    std::string config = bed.write_config({queue});
    migrate_apply(config);

    auto dispatcher = bed.start_dispatcher(config);
    rowpump::redis::Connection redis = bed.redis_client();
    const std::string key = ready_key("users");
    REQUIRE(eventually(
        20s, [&] { return list_length(redis, key) >= 2000; }, 5ms));
    dispatcher->signal(SIGTERM);
    auto sent = std::chrono::steady_clock::now();
    std::optional<ExitStatus> status = dispatcher->wait(1500ms);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - sent);
    INFO("dispatcher stopped after " << took.count() << " ms");
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");

    std::vector<std::string> messages = list_all(redis, key);
    std::set<std::string> pushed(messages.begin(), messages.end());
    CHECK(pushed.size() == messages.size());
    auto claimed =
        db.map("SELECT user_id, rp_token FROM user_block_status WHERE rp_token IS NOT NULL");
    std::vector<std::string> claimed_not_pushed;
    for (const auto& [id, token] : claimed) {
        if (pushed.count(id + ":" + *token) == 0) claimed_not_pushed.push_back(id);
    }
    CHECK(claimed.size() == messages.size());  // nothing pushed that MySQL does not hold

    if (!claimed_not_pushed.empty()) {
        // Not the expected behaviour, but a row must still not be lost: its lease runs out
        // and a second dispatcher run pushes it.
        WARN(claimed_not_pushed.size() << " rows claimed but not pushed at SIGTERM, e.g. row "
                                       << claimed_not_pushed.front() << "; checking that a second "
                                       << "run dispatches them after their lease");
        auto second = bed.start_dispatcher(config, "dispatcher-2.log");
        auto pushed_again = [&] {
            std::set<std::string> ids;
            for (const auto& m : list_all(redis, key)) {
                if (pushed.count(m) == 0) ids.insert(m.substr(0, m.find(':')));
            }
            return count_missing({claimed_not_pushed.begin(), claimed_not_pushed.end()}, ids) == 0;
        };
        CHECK(eventually(30s, pushed_again, 100ms));
    }
    INFO(claimed_not_pushed.size() << " of " << claimed.size() << " claimed rows were not pushed");
    CHECK(claimed_not_pushed.empty());
}

namespace {

// The dispatcher starts while `server` is down: it must keep running (an observation window,
// not a guess), then dispatch every row promptly once the server is up. Rows it could not
// push would come back only after their lease (60 s), so all 500 arriving in time also shows
// that nothing was claimed while a server was away.
template <typename Server>
void check_waits_for(TestBed& bed, Server& server) {
    MysqlClient db = bed.db();
    seed_user_block_status(db, 500);
    std::string config = bed.write_config();
    migrate_apply(config);
    server.stop();

    auto dispatcher = bed.start_dispatcher(config);
    std::optional<ExitStatus> early = dispatcher->wait(3s);
    INFO("dispatcher ended: " << (early ? early->describe() : "no"));
    REQUIRE_FALSE(early);

    server.start();
    rowpump::redis::Connection redis = bed.redis_client();
    const std::string key = ready_key("users");
    CHECK(eventually(30s, [&] { return list_length(redis, key) == 500; }));
    std::set<std::string> ids;
    for (const auto& t : parse_ready_all(list_all(redis, key))) ids.insert(t.id);
    CHECK(ids == id_range(1, 500));
    CHECK(dispatcher->running());
}

}  // namespace

TEST_CASE("MySQL down at start: the dispatcher waits and works once the server is up",
          "[dispatcher]") {
    TestBed bed;
    check_waits_for(bed, bed.mysql);
}

TEST_CASE("Redis down at start: the dispatcher waits and works once the server is up",
          "[dispatcher]") {
    TestBed bed;
    check_waits_for(bed, bed.redis);
}
