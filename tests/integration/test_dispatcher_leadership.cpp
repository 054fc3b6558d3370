// The leader lock: a leader that stops making progress (frozen, a stuck host) is replaced
// within seconds, and a leader that wakes up after losing the lock writes nothing.

#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/dispatcher/redis/redis_queue.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/push_monitor.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/seed.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

std::int64_t server_micros(rowpump::redis::Connection& redis) {
    const auto time = redis.command({"TIME"}).strings();
    return std::stoll(time.at(0)) * 1000000 + std::stoll(time.at(1));
}

}  // namespace

TEST_CASE("a frozen leader is replaced within 5 s and steps down when it wakes", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 300);
    QueueSpec queue;
    queue.name = "paced";
    queue.batch = 1;
    queue.rate = "1/300ms";  // a push every 300 ms shows who dispatches, and when
    const std::string config = bed.write_config({queue});  // leader_timeout: the default
    migrate_apply(config);

    PushMonitor monitor(bed.redis_client(), ready_key("paced"));
    rowpump::redis::Connection redis = bed.redis_client();
    auto leader = bed.start_dispatcher(config, "a.log");
    REQUIRE(eventually(10s, [&] { return leader->log_count("took the leader lock"); }));
    auto standby = bed.start_dispatcher(config, "b.log");
    REQUIRE(eventually(10s, [&] { return standby->log_count("standing by"); }));
    REQUIRE(monitor.wait_for(2, 10s));

    for (int round = 0; round < 2; ++round) {
        INFO("round " << round);
        REQUIRE(monitor.wait_for(1, 10s));
        leader->signal(SIGSTOP);  // right after a push: the freeze stops the dispatching
        const std::int64_t frozen_at = server_micros(redis);
        const std::string frozen = monitor.pushes().back().client;  // its Redis connection
        const std::size_t took = standby->log_count("took the leader lock");

        // A push already on its way when the leader froze may still land; then the stand-by.
        bool replaced = false;
        while (!replaced && monitor.wait_for(1, 10s))
            replaced = monitor.pushes().back().client != frozen;
        REQUIRE(replaced);
        const std::size_t first_new = monitor.pushes().size() - 1;
        const std::int64_t replaced_after = monitor.pushes().back().micros - frozen_at;
        INFO("the stand-by dispatched " << replaced_after << " us after the freeze");
        CHECK(replaced_after <= 5000000);
        CHECK(standby->log_count("took the leader lock") == took + 1);

        leader->signal(SIGCONT);
        CHECK(eventually(5s, [&] { return leader->log_count("lost the leader lock"); }));
        REQUIRE(monitor.wait_for(3, 10s));  // the old leader had time to push, if it would
        for (std::size_t i = first_new; i < monitor.pushes().size(); ++i)
            CHECK(monitor.pushes()[i].client != frozen);
        CHECK(leader->running());
        std::swap(leader, standby);
    }
    INFO("pushes: " << monitor.pushes().size() << ", shortest gap " << monitor.min_gap() << " us");
    CHECK(monitor.min_gap() >= 300000);
    std::set<std::string> ids;
    for (const auto& task : parse_ready_all(monitor.messages())) ids.insert(task.id);
    CHECK(ids.size() == monitor.messages().size());  // nothing pushed twice
}

// The fence itself: what a dispatcher that does not hold the lock sends is refused whole,
// including after Redis lost the key (a restart without persistence) and another took it.
TEST_CASE("pushes and done-list trims of a dispatcher without the leader lock change nothing",
          "[dispatcher]") {
    RedisServer server;
    rowpump::redis::Connection redis = server.connect();
    rowpump::QueueConfig queue;
    queue.name = "q";
    const auto keys = rowpump::protocol::keys_for("q");
    auto a = rowpump::RedisQueue::open(server.options(), queue, "a");
    auto b = rowpump::RedisQueue::open(server.options(), queue, "b");
    const std::vector<rowpump::ClaimedRow> rows{{"1", "0000000000000000-1-1"},
                                                {"2", "0000000000000000-1-2"}};
    redis.command({"RPUSH", keys.done, "m1", "m2"});
    std::vector<rowpump::DoneEntry> done(2);

    const auto taken = a.lead();
    CHECK(taken.holder == "a");
    CHECK(taken.took_free);
    const auto renewed = a.lead();
    CHECK(renewed.holder == "a");
    CHECK_FALSE(renewed.took_free);
    const auto other = b.lead();
    CHECK(other.holder == "a");
    CHECK_FALSE(other.took_free);
    const rowpump::PushWindow refused = b.push(rows, {});
    CHECK_FALSE(refused.leader);
    CHECK_FALSE(refused.pushed);
    CHECK(list_length(redis, keys.ready) == 0);
    CHECK(redis.command({"HGET", keys.stats, "dispatched"}).is_nil());
    CHECK_FALSE(b.ack_done(done, {}));
    CHECK(list_length(redis, keys.done) == 2);

    CHECK(a.push(rows, {}).pushed);
    CHECK(list_length(redis, keys.ready) == 2);

    redis.command({"DEL", keys.leader});  // Redis lost the key; b asks first
    CHECK(b.lead().holder == "b");
    CHECK(a.lead().holder == "b");
    CHECK_FALSE(a.push(rows, {}).leader);
    CHECK_FALSE(a.ack_done(done, {}));
    CHECK(list_length(redis, keys.ready) == 2);
    CHECK(b.ack_done(done, {}));
    CHECK(list_length(redis, keys.done) == 0);
}
