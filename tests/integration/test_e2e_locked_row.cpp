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

// A row the application locks after it was dispatched: its task runs and reports while the
// lock is held, longer than the session's innodb_lock_wait_timeout (10 s) by far. The outcome
// batch used to wait on that row, fail after the lock wait, and be read again whole: no other
// outcome applied while the lock was held, and the leader lock (3 s) lapsed meanwhile. Now the
// other rows' outcomes apply, the locked row's outcome waits in the done list and applies once
// the lock goes, and one warning names the row. With claim: mysql the lease (20 s) ends during
// the hold: the keeper cannot renew a locked row, and no claim may take it before its outcome.
TEST_CASE("e2e: a row locked by the application while its outcome waits delays only that outcome",
          "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    INFO("claim: " << claim);
    constexpr std::int64_t kOthers = 200;
    QueueSpec queue = e2e_queue();
    queue.claim = claim;
    queue.batch = 50;
    queue.max_backlog = 50;
    queue.lease = "20s";
    E2eSystem sys(queue, kOthers + 1);
    const auto keys = sys.keys();

    // The first claim's rows wait in the ready list (no worker yet): the application locks one.
    REQUIRE(eventually(20s, [&] { return list_length(sys.redis, keys.ready) > 0; }));
    const auto ready = parse_ready_all(list_all(sys.redis, keys.ready));
    REQUIRE(!ready.empty());
    const std::string locked_id = ready.front().id;
    const std::string leader =
        sys.redis.command({"GET", keys.leader}).optional_string().value_or("");
    REQUIRE(!leader.empty());
    MysqlClient app = sys.bed.db();
    app.exec("START TRANSACTION");
    REQUIRE(app.rows("SELECT status FROM user_block_status WHERE user_id = " + locked_id +
                     " FOR UPDATE")
                .size() == 1);
    const auto locked_at = std::chrono::steady_clock::now();

    TestWorkerSpec spec;
    spec.worker_id = "locked-outcome";
    spec.threads = 4;
    spec.batch = 8;
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);
    const auto handled_locked = [&] {
        for (const auto& task : worker.handled()) {
            if (task.id == locked_id) return true;
        }
        return false;
    };
    const std::string warning = "row " + locked_id + " has been locked by another transaction";

    // While the lock is held: every other row completes, the locked row's task has run and
    // its outcome waits, the warning is out, the leader lock never changes hands, and the
    // hold outlasts twice the lock wait and (claim: mysql) the row's lease.
    bool leader_kept = true;
    const bool others_done = eventually(
        75s,
        [&] {
            const auto now_leader =
                sys.redis.command({"GET", keys.leader}).optional_string().value_or("");
            if (now_leader != leader) leader_kept = false;
            return sys.rows_left() == 1 && handled_locked() &&
                   sys.dispatcher->log().find(warning) != std::string::npos &&
                   std::chrono::steady_clock::now() - locked_at >= 30s;
        },
        100ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\ndispatcher log:\n"
                                            << sys.dispatcher->log_tail());
    CHECK(leader_kept);
    REQUIRE(others_done);
    CHECK(sys.db.scalar("SELECT status FROM user_block_status WHERE user_id = " + locked_id) == 0);
    CHECK(queue_stat(sys.redis, "users", "completed") == kOthers);

    // The lock goes: the outcome the handler reported is applied, not stale, not run again.
    app.exec("COMMIT");
    REQUIRE(eventually(
        30s, [&] { return sys.rows_left() == 0; }, 50ms));
    REQUIRE(eventually(10s,
                       [&] { return queue_stat(sys.redis, "users", "completed") == kOthers + 1; }));
    CHECK(sys.db.scalar("SELECT runs FROM user_block_status WHERE user_id = " + locked_id) == 1);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(worker.handled().size() == static_cast<std::size_t>(kOthers + 1));
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["dispatched"] == kOthers + 1);
    CHECK(stats["stale"] == 0);
    CHECK(stats["bad"] == 0);
    CHECK(sys.redis.command({"GET", keys.leader}).optional_string().value_or("") == leader);

    worker.process().signal(SIGTERM);
    REQUIRE(worker.process().wait(10s));
    CHECK(sys.dispatcher->running());
    CHECK(sys.dispatcher->log_count("took the leader lock") == 1);
    CHECK(sys.dispatcher->log_count(warning) == 1);
    CHECK(sys.dispatcher->log().find(" error ") == std::string::npos);
}
