// End to end: a row the application holds with SELECT ... FOR UPDATE delays only that row.
// Claims pass over it, every other row is dispatched and completed while the lock is held,
// the row is logged once with its id, and it is dispatched as soon as the lock goes.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;

TEST_CASE("e2e: a row locked by the application never stalls the queue", "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    INFO("claim: " << claim);
    constexpr std::int64_t kRows = 5000;
    const std::string locked_id = "2500";
    QueueSpec queue = e2e_queue();  // order_by user_id
    queue.claim = claim;
    queue.batch = 200;
    queue.max_backlog = 200;  // before any worker runs, only rows 1..200 can be claimed
    queue.lease = "5m";       // nothing comes back by lease expiry during the test
    E2eSystem sys(queue, kRows);
    const std::string warning = "row " + locked_id + " has been locked by another transaction";

    // The application's transaction: the row is due and unclaimed when the lock is taken.
    MysqlClient app = sys.bed.db();
    app.exec("START TRANSACTION");
    const auto held =
        app.rows("SELECT status, rp_token FROM user_block_status WHERE user_id = " + locked_id +
                 " FOR UPDATE");
    REQUIRE(held.size() == 1);
    REQUIRE(held[0][0].value_or("NULL") == "0");
    REQUIRE(!held[0][1]);

    TestWorkerSpec spec;
    spec.worker_id = "locked-row";
    spec.threads = 4;
    spec.batch = 16;
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);

    // Every other row flows while the lock is held (the claim used to wait on the locked
    // row, and with it the whole queue, until InnoDB gave up after innodb_lock_wait_timeout).
    const auto started = std::chrono::steady_clock::now();
    const bool others_done = eventually(
        30s, [&] { return sys.rows_left() == 1; }, 50ms);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\ndispatcher log:\n"
                                            << sys.dispatcher->log_tail());
    REQUIRE(others_done);
    WARN(kRows - 1 << " rows completed in " << took.count() << " ms beside the locked row");
    CHECK(sys.db.scalar("SELECT status FROM user_block_status WHERE user_id = " + locked_id) == 0);

    // A row that stays locked across many claims is logged, with its id, while still held.
    REQUIRE(
        eventually(30s, [&] { return sys.dispatcher->log().find(warning) != std::string::npos; }));

    app.exec("COMMIT");
    REQUIRE(eventually(
        20s, [&] { return sys.rows_left() == 0; }, 50ms));
    REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "completed") == kRows; }));
    CHECK(sys.rows_not_run_once() == 0);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["dispatched"] == kRows);
    CHECK(stats["stale"] == 0);
    CHECK(stats["bad"] == 0);

    worker.process().signal(SIGTERM);
    REQUIRE(worker.process().wait(10s));
    const std::string log = sys.dispatcher->log();
    const auto logged = log.find(warning);
    REQUIRE(logged != std::string::npos);
    CHECK(log.find(warning, logged + 1) ==
          std::string::npos);  // once, however many claims passed it
    CHECK(log.find(" warning ", log.find(" warning ") + 1) ==
          std::string::npos);  // and nothing else
    CHECK(log.find(" error ") == std::string::npos);
}
