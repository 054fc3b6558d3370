// End to end under load: the dispatcher and four SDK worker processes drain 50,000 rows.
// Every claim ends in exactly one applied outcome, and nothing is left in flight.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;

TEST_CASE("e2e: 50000 tasks over 4 worker processes x 8 threads are each applied exactly once",
          "[e2e]") {
    // Two processes take one task per round trip, two take up to 16 (WorkerOptions::batch).
    constexpr std::int64_t kRows = 50000;
    QueueSpec queue = e2e_queue();
    queue.batch = 1000;
    queue.max_backlog = 20000;
    queue.lease = "60s";  // nothing may come back by lease expiry during the run
    E2eSystem sys(queue, kRows);

    const auto started = std::chrono::steady_clock::now();
    std::vector<std::unique_ptr<TestWorkerProcess>> workers;
    for (int i = 0; i < 4; ++i) {
        TestWorkerSpec spec;
        spec.worker_id = "load-" + std::to_string(i);
        spec.threads = 8;
        spec.batch = i < 2 ? 1 : 16;
        workers.push_back(std::make_unique<TestWorkerProcess>(ROWPUMP_TEST_WORKER, sys, spec));
    }

    // The stats counter moves only after the outcomes are committed in MySQL.
    const bool all_completed = eventually(
        120s, [&] { return queue_stat(sys.redis, "users", "completed") >= kRows; }, 100ms);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(all_completed);
    WARN("50,000 tasks completed in " << took.count() << " ms");

    for (auto& w : workers) w->process().signal(SIGTERM);
    for (auto& w : workers) {
        auto status = w->process().wait(10s);
        INFO("worker " << w->id() << " output:\n" << w->output());
        REQUIRE(status);
        CHECK(status->describe() == "exit code 0");
    }

    CHECK(sys.rows_left() == 0);
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status <> 1") == 0);
    CHECK(sys.rows_not_run_once() == 0);  // no outcome applied twice, none lost
    CHECK(sys.db.scalar(
              std::string("SELECT COUNT(*) FROM user_block_status WHERE ") + kClaimedSql +
              " OR rp_lease_until IS NOT NULL OR rp_attempts <> 0 OR rp_dead_at IS NOT NULL") == 0);

    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["completed"] == kRows);
    CHECK(stats["dispatched"] == kRows);  // nothing had to be dispatched twice
    CHECK(stats["stale"] == 0);
    CHECK(stats["bad"] == 0);
    CHECK(stats["reaped"] == 0);
    CHECK(list_length(sys.redis, sys.keys().bad) == 0);
    CHECK(list_length(sys.redis, sys.keys().ready) == 0);
    CHECK(list_length(sys.redis, sys.keys().done) == 0);

    // Claims and outcomes run side by side on two connections: in a clean run they never
    // get in each other's way (no deadlock, no lock wait timeout) and nothing is retried.
    const std::string log = sys.dispatcher->log();
    INFO("dispatcher log:\n" << sys.dispatcher->log_tail());
    CHECK(log.find(" error ") == std::string::npos);
    CHECK(log.find(" warning ") == std::string::npos);

    // Each worker handled its share once; together, every row exactly once.
    std::map<std::string, int> handled;
    std::size_t lines = 0;
    for (auto& w : workers) {
        auto tasks = w->handled();
        CHECK(!tasks.empty());  // the four processes shared the load
        lines += tasks.size();
        for (const auto& t : tasks) ++handled[t.id];
        CHECK(list_length(sys.redis, w->processing_key()) == 0);
    }
    CHECK(lines == static_cast<std::size_t>(kRows));
    CHECK(handled.size() == static_cast<std::size_t>(kRows));
    CHECK(sys.redis.command({"SCARD", sys.keys().workers}).integer() == 0);  // all signed off
    CHECK(sys.dispatcher->running());
}
