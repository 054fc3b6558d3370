// A step forward of the Redis host's wall clock (redis-server run under libfaketime, whose
// offset the test moves, as NTP stepping that host would) by far more than the workers'
// heartbeat TTL, while a worker holds 20 tasks. Redis expires every heartbeat with the step,
// although the worker is alive: the reaper must not take that for 20 dead tasks. Each row is
// dispatched and run once, none is counted as a failed attempt.

#include <chrono>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;

TEST_CASE(
    "redis clock: a step forward of the Redis host past the heartbeat TTL while 20 tasks "
    "are held takes none back",
    "[e2e][reaper]") {
    constexpr std::int64_t kRows = 20;
    E2eSystem sys(e2e_queue(), kRows, ServerClock::real, ServerClock::stepped);  // lease 60s
    TestWorkerSpec spec;
    spec.worker_id = "holder";
    spec.threads = static_cast<int>(kRows);
    spec.heartbeat_ttl = std::chrono::milliseconds(3000);
    spec.work = std::chrono::seconds(8);
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);
    REQUIRE(
        eventually(10s, [&] { return list_length(sys.redis, worker.processing_key()) == kRows; }));

    // Ten minutes ahead: every key with a TTL (the heartbeat) is past its end.
    sys.bed.redis.set_clock_offset(std::chrono::minutes(10));
    const auto keys = sys.keys();
    const bool finished = eventually(60s, [&] {
        return sys.rows_left() == 0 && list_length(sys.redis, keys.ready) == 0 &&
               list_length(sys.redis, worker.processing_key()) == 0 &&
               list_length(sys.redis, keys.done) == 0;
    });
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\nworker output:\n"
                                            << worker.output() << "\ndispatcher log:\n"
                                            << sys.dispatcher->log_tail());
    CHECK(finished);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["reaped"] == 0);
    CHECK(stats["retried"] == 0);
    CHECK(stats["dispatched"] == kRows);
    CHECK(stats["completed"] == kRows);
    CHECK(worker.handled().size() == static_cast<std::size_t>(kRows));
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(sys.dispatcher->log_tail().find("the Redis server's clock stepped forward") !=
          std::string::npos);
}
