// End to end, bad input from workers: a done message naming a value the queue does not
// declare, a done message that is not one at all, a queue nobody announced. Each gets a
// clear error, bad messages are set aside, the dispatcher carries on, and no row is lost.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/e2e_worker.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/protocol_worker.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;
using Catch::Matchers::Contains;

TEST_CASE(
    "e2e: bad done messages go to the bad list while the dispatcher carries on and the row still "
    "completes",
    "[e2e]") {
    constexpr std::int64_t kRows = 20;
    QueueSpec queue = e2e_queue();
    queue.lease = "5s";  // the row reported with a bad message comes back after this
    E2eSystem sys(queue, kRows);
    const auto keys = sys.keys();

    // Take one task by hand, as a plain Redis client would (no heartbeat, not in the
    // workers set: only its lease can bring the row back).
    const std::string hand = keys.prefix + "processing:by-hand";
    std::optional<std::string> taken;
    REQUIRE(eventually(10s, [&] {
        taken = sys.redis.command({"LMOVE", keys.ready, hand, "LEFT", "RIGHT"}).optional_string();
        return taken.has_value();
    }));
    std::string error;
    auto task = rowpump::protocol::parse_ready(*taken, error);
    REQUIRE(task);

    // "color" is not a placeholder of on_success. Pushed one at a time: the dispatcher logs
    // the first bad message of each batch.
    const std::string undeclared = *taken + " ok status=1 color=red";
    sys.redis.command({"RPUSH", keys.done, undeclared});
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.bad) == 1; }));
    const std::string garbage = "garbage text";
    sys.redis.command({"RPUSH", keys.done, garbage});
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.bad) == 2; }));

    CHECK(list_all(sys.redis, keys.bad) == std::vector<std::string>{undeclared, garbage});
    // Counted in the same pipeline as the move aside, just after it.
    CHECK(eventually(10s, [&] { return queue_stat(sys.redis, "users", "bad") == 2; }));
    const std::string log = sys.dispatcher->log();
    INFO(sys.dispatcher->log_tail());
    CHECK_THAT(log, Contains("undeclared value 'color' (queue declares: status)"));
    CHECK_THAT(log, Contains("(message: garbage text)"));
    CHECK_THAT(log, Contains("rowpump:{users}:bad"));
    // The report with an undeclared value counts as a failed attempt (so a worker that keeps
    // sending it uses up the row's attempts); on_success did not run.
    CHECK(sys.db.scalar("SELECT rp_attempts FROM user_block_status WHERE user_id = " + task->id) ==
          1);
    CHECK_THAT(*sys.db.scalar_string(
                   "SELECT rp_last_error FROM user_block_status WHERE user_id = " + task->id),
               Contains("undeclared value 'color'"));
    CHECK(sys.db.scalar("SELECT runs FROM user_block_status WHERE user_id = " + task->id) == 0);

    // Rows added after the bad messages are dispatched too, and everything completes: the
    // row taken by hand once its retry backoff has passed.
    insert_e2e_rows(sys.db, kRows + 1, kRows);
    TestWorkerSpec spec;
    spec.worker_id = "worker";
    spec.threads = 2;
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);
    const bool done = eventually(
        30s, [&] { return sys.rows_left() == 0; }, 50ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(done);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status") == 2 * kRows);
    bool seen_again = false;  // handled under a claim of its own, not the one taken by hand
    for (const auto& t : worker.handled()) {
        seen_again = seen_again || (t.id == task->id && t.token != task->token);
    }
    CHECK(seen_again);
    CHECK(sys.dispatcher->running());
    CHECK(list_length(sys.redis, keys.bad) == 2);  // nothing else went bad

    worker.process().signal(SIGTERM);
    auto status = worker.process().wait(10s);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
}

TEST_CASE(
    "e2e: a plain worker that keeps reporting an undeclared value uses up the row's attempts and "
    "the row ends dead",
    "[e2e]") {
    QueueSpec queue = e2e_queue();
    queue.lease = "2s";  // before: the row came back after each lease, for ever
    queue.extra_lines = {"retry: { base: 50ms, cap: 100ms, max_attempts: 3 }"};
    E2eSystem sys(queue, 1);
    const auto keys = sys.keys();
    ProtocolWorkerOptions options;
    options.redis = sys.bed.redis.options();
    options.worker_id = "plain";
    options.report = "ok status=1 color=red";
    ProtocolWorker worker(options);

    const bool dead = eventually(20s, [&] {
        return sys.db.scalar(
                   "SELECT COUNT(*) FROM user_block_status WHERE rp_dead_at IS NOT NULL") == 1;
    });
    INFO(describe_stats(sys.redis, "users")
         << "; " << sys.table_summary() << "; worker error " << worker.last_error());
    REQUIRE(dead);
    CHECK(sys.db.scalar("SELECT rp_attempts FROM user_block_status") == 3);
    CHECK_THAT(*sys.db.scalar_string("SELECT rp_last_error FROM user_block_status"),
               Contains("undeclared value 'color' (queue declares: status)"));
    CHECK(sys.db.scalar("SELECT runs FROM user_block_status") == 0);
    // Each report is kept in the bad list as it was sent, and counted once.
    REQUIRE(eventually(5s, [&] { return queue_stat(sys.redis, "users", "dead") == 1; }));
    CHECK(list_length(sys.redis, keys.bad) == 3);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["bad"] == 3);
    CHECK(stats["retried"] == 2);
    CHECK(stats["stale"] == 0);
    CHECK(stats["dispatched"] == 3);
    worker.stop();
    CHECK(worker.handled() == 3);
}

TEST_CASE("e2e: a queue no dispatcher announced is a clear error for workers and the CLI",
          "[e2e]") {
    E2eSystem sys(e2e_queue(), 1);
    // The real queue is announced: the error below is about the name, not a slow start.
    REQUIRE(eventually(10s, [&] {
        return sys.redis.command({"EXISTS", sys.keys().meta}).integer() == 1;
    }));

    auto options = e2e_worker_options(sys, "lost");
    options.queue = "nosuchqueue";
    options.queue_wait = 1000ms;
    rowpump::Worker worker(options);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(worker.fetch(1000ms), Contains("unknown queue 'nosuchqueue'"));
    CHECK(std::chrono::steady_clock::now() - start < 5s);

    TestWorkerSpec spec;
    spec.worker_id = "lost-process";
    spec.queue = "nosuchqueue";
    spec.extra_args = {"--queue-wait-ms", "1000"};
    TestWorkerProcess process(ROWPUMP_TEST_WORKER, sys, spec);
    auto status = process.process().wait(10s);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 1");
    CHECK_THAT(process.output(), Contains("unknown queue 'nosuchqueue'"));

    RunResult dead = rowpump_cli({"dead", "-c", sys.config, "nosuchqueue"});
    INFO(dead.describe());
    CHECK(!dead.status.success());
    CHECK_THAT(dead.err, Contains("unknown queue 'nosuchqueue'"));
    RunResult retry = rowpump_cli({"retry", "-c", sys.config, "nosuchqueue", "--all"});
    INFO(retry.describe());
    CHECK(!retry.status.success());
    CHECK_THAT(retry.err, Contains("unknown queue 'nosuchqueue'"));
}

TEST_CASE("e2e: a reported value MySQL refuses does not stop the other outcomes", "[e2e]") {
    // A declared value of the wrong kind for its column (300 in a TINYINT) passes every
    // check up to the UPDATE, which MySQL refuses (strict mode). It must cost that one report
    // (set aside, or the row retried), never the whole batch it came with.
    constexpr std::int64_t kRows = 100;
    QueueSpec queue = e2e_queue();
    queue.lease = "5s";  // the row with the refused value comes back after this
    E2eSystem sys(queue, kRows);

    rowpump::Worker poisoner(e2e_worker_options(sys, "poisoner"));
    auto task = poisoner.fetch(10s);
    REQUIRE(task);
    REQUIRE(poisoner.complete(*task, rowpump::Outcome::success({{"status", "300"}})));

    TestWorkerSpec spec;
    spec.worker_id = "worker";
    spec.threads = 2;
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);
    const std::string others_left =
        "SELECT COUNT(*) FROM user_block_status WHERE status = 0 AND user_id <> " + task->id;
    const bool others_done = eventually(
        20s, [&] { return sys.db.scalar(others_left) == 0; }, 100ms);
    INFO(describe_stats(sys.redis, "users")
         << "; done list " << list_length(sys.redis, sys.keys().done) << "; " << sys.table_summary()
         << "\n"
         << sys.dispatcher->log_tail(6));
    REQUIRE(others_done);
    const bool all_done = eventually(
        30s, [&] { return sys.rows_left() == 0; }, 100ms);
    REQUIRE(all_done);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status <> 1") == 0);
    CHECK(list_length(sys.redis, sys.keys().done) == 0);
    CHECK_THAT(sys.dispatcher->log(), Contains("Out of range value for column 'status'"));
    CHECK(sys.dispatcher->running());
}
