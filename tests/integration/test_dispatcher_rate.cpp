// `rate` is a strict minimum interval between dispatches, whoever dispatches. The times come
// from Redis itself (PushMonitor): MONITOR stamps every command with the server's clock.

#include <signal.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/push_monitor.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/seed.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

std::set<std::string> distinct_ids(const std::vector<std::string>& messages) {
    std::set<std::string> ids;
    for (const auto& t : parse_ready_all(messages)) ids.insert(t.id);
    return ids;
}

std::int64_t max_gap(const PushMonitor& monitor) {
    std::int64_t gap = 0;
    const auto& pushes = monitor.pushes();
    for (std::size_t i = 1; i < pushes.size(); ++i)
        gap = std::max(gap, pushes[i].micros - pushes[i - 1].micros);
    return gap;
}

}  // namespace

TEST_CASE("a queue with rate 1/200ms never dispatches two rows closer than 200 ms",
          "[dispatcher]") {
    constexpr std::size_t kRows = 12;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, kRows);
    QueueSpec queue;
    queue.name = "paced";
    queue.batch = 1;
    queue.rate = "1/200ms";
    std::string config = bed.write_config({queue});
    migrate_apply(config);

    PushMonitor monitor(bed.redis_client(), ready_key("paced"));
    auto dispatcher = bed.start_dispatcher(config);
    REQUIRE(monitor.wait_for(kRows, 30s));
    REQUIRE(monitor.messages().size() == kRows);

    INFO("gaps between dispatches: min " << monitor.min_gap() << " us, max " << max_gap(monitor)
                                         << " us");
    CHECK(monitor.min_gap() >= 200000);
    CHECK(max_gap(monitor) < 1000000);  // paced by the rate, not stalled by idle back-off
    CHECK(distinct_ids(monitor.messages()).size() == kRows);

    dispatcher->signal(SIGTERM);
    std::optional<ExitStatus> status = dispatcher->wait(5s);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
}

// The window lives in Redis, written by the push itself: a dispatcher that starts right after
// another one pushed (a crash and restart, a clean restart, a stand-by taking over) waits for
// the rest of the period too. Each step starts the next dispatcher right after a push.
TEST_CASE("the rate holds across kill -9, restarts and takeovers", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 200);
    QueueSpec queue;
    queue.name = "paced";
    queue.batch = 1;
    queue.rate = "1/1s";
    // A killed leader's lock expires well inside the period: the window is what holds.
    queue.extra_lines = {"leader_timeout: 300ms"};
    const std::string config = bed.write_config({queue});
    migrate_apply(config);

    PushMonitor monitor(bed.redis_client(), ready_key("paced"));
    int started = 0;
    auto start = [&] {
        return bed.start_dispatcher(config, "dispatcher-" + std::to_string(++started) + ".log");
    };
    auto leader = start();
    REQUIRE(monitor.wait_for(1, 20s));
    for (int round = 0; round < 3; ++round) {
        // kill -9 and start again at once.
        leader->process().kill();
        leader = start();
        REQUIRE(monitor.wait_for(2, 20s));
        // SIGTERM, wait for the exit, start again.
        leader->signal(SIGTERM);
        REQUIRE(leader->wait(5s));
        leader = start();
        REQUIRE(monitor.wait_for(2, 20s));
        // A stand-by takes over when the leader stops.
        auto standby = start();
        REQUIRE(eventually(
            10s, [&] { return standby->log().find("standing by") != std::string::npos; }));
        REQUIRE(monitor.wait_for(1, 20s));
        leader->signal(SIGTERM);
        REQUIRE(leader->wait(5s));
        leader = std::move(standby);
        REQUIRE(monitor.wait_for(2, 20s));
    }
    INFO("pushes: " << monitor.pushes().size() << ", shortest gap " << monitor.min_gap() << " us");
    CHECK(monitor.min_gap() >= 1000000);
    const auto messages = monitor.messages();
    CHECK(distinct_ids(messages).size() == messages.size());  // nothing pushed twice
}
