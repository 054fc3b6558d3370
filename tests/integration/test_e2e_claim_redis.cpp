// End to end with `claim: redis`: the row is written once per task, by its outcome. What a
// claim in the row guards against is guarded otherwise, and each case is checked on data:
// - a task is pushed once while it is in flight, also by a new leader (InFlight, learned from
//   Redis when it takes over);
// - an outcome applied a second time, or late, changes nothing, even when its row is due
//   again (the row's version, QueueSql::fence);
// - a task that no Redis list holds any more (lost with Redis's data) comes back when its
//   lease ends (test_claim_safety.cpp: not before).
// The other e2e tests (outages, retries, locked rows, worker kills) run in both modes.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/common/protocol/messages.hpp"
#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/e2e_worker.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/rowpump_cli.hpp"

using namespace rowpump::testing;
using std::chrono::milliseconds;

namespace {

QueueSpec redis_claim_queue() {
    QueueSpec queue = e2e_queue();
    queue.claim = "redis";
    return queue;
}

// How many times the workers ran each row's handler.
std::map<std::string, int> runs_by_row(const std::vector<TestWorkerProcess*>& workers) {
    std::map<std::string, int> runs;
    for (auto* worker : workers) {
        for (const auto& task : worker->handled()) ++runs[task.id];
    }
    return runs;
}

// Rows whose `runs` column differs from the number of handler runs the workers logged.
std::int64_t rows_applied_not_as_run(E2eSystem& sys, const std::map<std::string, int>& runs) {
    std::int64_t wrong = 0;
    for (const Row& row : sys.db.rows("SELECT user_id, runs FROM user_block_status")) {
        const auto it = runs.find(row[0].value_or(""));
        const int ran = it == runs.end() ? 0 : it->second;
        wrong += std::to_string(ran) != row[1].value_or("NULL");
    }
    return wrong;
}

}  // namespace

TEST_CASE("e2e: claim: redis writes each task's row once, and applies each outcome once", "[e2e]") {
    constexpr std::int64_t kRows = 20000;
    QueueSpec queue = redis_claim_queue();
    queue.max_backlog = 2000;  // most rows are dispatched while outcomes are applied
    E2eSystem sys(queue, kRows);
    const auto keys = sys.keys();
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.ready) == 2000; }));
    // Every session's row updates: nothing else writes during the test.
    const auto updated_before = rows_updated(sys.db);

    TestWorkerSpec quick{"quick-a"}, batched{"quick-b"};
    quick.threads = batched.threads = 4;
    batched.batch = 16;
    TestWorkerProcess a(ROWPUMP_TEST_WORKER, sys, quick), b(ROWPUMP_TEST_WORKER, sys, batched);
    const bool done = eventually(
        90s, [&] { return queue_stat(sys.redis, "users", "completed") >= kRows; }, 50ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(done);

    // One row update per task: the outcome. (With claim: mysql, 2 per task: the claim too.)
    CHECK(rows_updated(sys.db) - updated_before == kRows);
    CHECK(sys.rows_left() == 0);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(sys.rows_claimed() == 0);  // every row holds its outcome's settled token
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["dispatched"] == kRows);  // none pushed twice while in flight
    CHECK(stats["stale"] == 0);
    CHECK(stats["bad"] == 0);
    const auto runs = runs_by_row({&a, &b});
    CHECK(runs.size() == static_cast<std::size_t>(kRows));
    CHECK(rows_applied_not_as_run(sys, runs) == 0);
    const std::string log = sys.dispatcher->log();
    INFO("dispatcher log:\n" << sys.dispatcher->log_tail());
    CHECK(log.find(" warning ") == std::string::npos);
    CHECK(log.find(" error ") == std::string::npos);
}

TEST_CASE(
    "e2e: claim: redis: an outcome applied again after a crash changes nothing, though its row "
    "is due again",
    "[e2e]") {
    // Each row runs twice: after its first outcome it is due again at once.
    constexpr std::int64_t kFew = 300;
    QueueSpec queue = redis_claim_queue();
    queue.due = "runs < 2";
    queue.on_success = "runs = runs + 1, status = :status";
    E2eSystem sys(queue, kFew);
    const auto keys = sys.keys();
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.ready) == kFew; }));

    // First runs: their outcomes wait in the done list while the dispatcher is frozen.
    sys.dispatcher->signal(SIGSTOP);
    TestWorkerSpec spec{"first"};
    auto first = std::make_unique<TestWorkerProcess>(ROWPUMP_TEST_WORKER, sys, spec);
    REQUIRE(eventually(20s, [&] { return list_length(sys.redis, keys.done) == kFew; }));
    first->process().signal(SIGTERM);
    REQUIRE(first->process().wait(10s));

    // The dispatcher commits them but cannot acknowledge them (Redis refuses writes: with no
    // replica, min-replicas-to-write refuses every write, also a script's, while the done
    // list's reading script, which writes nothing here, still runs), then crashes. Every row is
    // due again, and its first outcome is still in the done list.
    sys.redis.command({"CONFIG", "SET", "min-replicas-to-write", "1"});
    sys.dispatcher->signal(SIGCONT);
    const bool committed = eventually(20s, [&] {
        return sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE runs = 1") == kFew;
    });
    sys.dispatcher->process().kill();
    sys.redis.command({"CONFIG", "SET", "min-replicas-to-write", "0"});
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(committed);
    REQUIRE(list_length(sys.redis, keys.done) == kFew);

    // The next dispatcher applies those outcomes again: they change nothing. Then it pushes
    // the second runs.
    sys.dispatcher = sys.bed.start_dispatcher(sys.config, "dispatcher-again.log");
    spec.worker_id = "second";
    TestWorkerProcess second(ROWPUMP_TEST_WORKER, sys, spec);
    const bool all_twice = eventually(30s, [&] {
        return sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE runs = 2") == kFew;
    });
    REQUIRE(
        eventually(10s, [&] { return queue_stat(sys.redis, "users", "completed") == 2 * kFew; }));
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(all_twice);
    const auto runs = runs_by_row({first.get(), &second});
    CHECK(rows_applied_not_as_run(sys, runs) == 0);  // runs = 2 only where the handler ran twice
    CHECK(second.handled().size() == static_cast<std::size_t>(kFew));
    CHECK(queue_stat(sys.redis, "users", "stale") == 0);
    CHECK(sys.dispatcher->log().find("300 outcomes had been applied already") != std::string::npos);
    CHECK(queue_stat(sys.redis, "users", "again") == kFew);
}

TEST_CASE("e2e: claim: redis: a new leader learns the tasks in flight and pushes none again",
          "[e2e]") {
    constexpr std::int64_t kRows = 3000;
    QueueSpec queue = redis_claim_queue();
    queue.max_backlog = 1000;
    E2eSystem sys(queue, kRows);
    const auto keys = sys.keys();
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.ready) == 1000; }));
    auto standby = sys.bed.start_dispatcher(sys.config, "standby.log");
    REQUIRE(
        eventually(10s, [&] { return standby->log().find("standing by") != std::string::npos; }));

    // Slow workers: when the leader dies, tasks wait in the ready list, in processing lists
    // and in the done list, and none of their rows has been written.
    TestWorkerSpec spec{"slow"};
    spec.threads = 4;
    spec.work = milliseconds(4);
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);
    REQUIRE(eventually(20s, [&] { return queue_stat(sys.redis, "users", "completed") >= 500; }));
    sys.dispatcher->process().kill();
    REQUIRE(eventually(
        20s, [&] { return standby->log().find("took the leader lock") != std::string::npos; }));

    const bool done = eventually(
        60s, [&] { return queue_stat(sys.redis, "users", "completed") >= kRows; }, 50ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\nstand-by log:\n"
                                            << standby->log_tail());
    REQUIRE(done);
    CHECK(sys.rows_left() == 0);
    CHECK(sys.rows_not_run_once() == 0);
    // Not one task was pushed again, so no handler ran twice.
    CHECK(queue_stat(sys.redis, "users", "dispatched") == kRows);
    const auto runs = runs_by_row({&worker});
    CHECK(runs.size() == static_cast<std::size_t>(kRows));
    CHECK(rows_applied_not_as_run(sys, runs) == 0);
    CHECK(standby->log().find("tasks in flight") != std::string::npos);
}

TEST_CASE("e2e: claim: redis: tasks lost from Redis come back when their lease ends", "[e2e]") {
    constexpr std::int64_t kRows = 500;
    QueueSpec queue = redis_claim_queue();
    queue.lease = "2s";  // tasks in flight are looked for in Redis every 250 ms
    E2eSystem sys(queue, kRows);
    const auto keys = sys.keys();
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.ready) == kRows; }));

    // The ready list is lost (as with a Redis restart without its data, but keeping the
    // leader lock): no worker can report those tasks, and their rows are due once the lease
    // of their tasks ended.
    sys.redis.command({"DEL", keys.ready});
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.ready) == kRows; }));
    CHECK(sys.dispatcher->log().find("tasks in flight were in no Redis list when their lease "
                                     "ended") != std::string::npos);

    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, TestWorkerSpec{"after"});
    REQUIRE(eventually(20s, [&] { return queue_stat(sys.redis, "users", "completed") >= kRows; }));
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(queue_stat(sys.redis, "users", "dispatched") == 2 * kRows);
    CHECK(worker.handled().size() == static_cast<std::size_t>(kRows));
}

TEST_CASE(
    "e2e: claim: redis: late copies of a scan's outcomes, applied by primary key, find their "
    "rows at a newer version and change nothing",
    "[e2e]") {
    // As the test below, for outcomes of one scan with equal values, which are applied as
    // one UPDATE ... WHERE id IN (...) (QueueSql::success_by_id) instead of a join.
    constexpr std::size_t kRows = 20;  // at least QueueStore's kSuccessByIdMin
    QueueSpec queue = redis_claim_queue();
    queue.due = "runs < 3";
    queue.on_success = "runs = runs + 1, status = :status";
    E2eSystem sys(queue, kRows);
    rowpump::Worker worker(e2e_worker_options(sys, "periodic"));
    const auto runs = [&] { return sys.db.scalar("SELECT SUM(runs) FROM user_block_status"); };
    const rowpump::Outcome ok = rowpump::Outcome::success({{"status", "1"}});
    const auto fetch_all = [&] {
        std::vector<rowpump::Task> tasks;
        while (tasks.size() < kRows) {
            auto task = worker.fetch(10s);
            REQUIRE(task);
            tasks.push_back(*task);
        }
        return tasks;
    };
    // Completed while the dispatcher is stopped, so that it applies them as one batch.
    const auto complete_together = [&](const std::vector<rowpump::Task>& tasks) {
        sys.dispatcher->signal(SIGSTOP);
        for (const auto& task : tasks) REQUIRE(worker.complete(task, ok));
        sys.dispatcher->signal(SIGCONT);
    };

    const auto first = fetch_all();
    for (const auto& task : first) REQUIRE(task.token.substr(0, 8) == first[0].token.substr(0, 8));
    complete_together(first);
    REQUIRE(eventually(10s, [&] { return runs() == kRows; }));
    const auto second = fetch_all();
    REQUIRE(rowpump_cli({"pause", "-c", sys.config, "users"}).status.success());
    complete_together(second);
    REQUIRE(eventually(10s, [&] { return runs() == 2 * kRows; }));

    std::vector<std::string> push{"RPUSH", sys.keys().done};
    for (const auto& task : first) {
        rowpump::protocol::Done late;
        late.task = task;
        late.verb = rowpump::Verb::success;
        late.values = {{"status", "1"}};
        push.push_back(rowpump::protocol::format_done(late));
    }
    sys.redis.command(push);
    REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "stale") == kRows; }));
    CHECK(runs() == 2 * kRows);  // no row counted a third run
    CHECK(queue_stat(sys.redis, "users", "completed") == 2 * kRows);
}

TEST_CASE(
    "e2e: claim: redis: a late copy of an outcome finds its row at a newer version and changes "
    "nothing",
    "[e2e]") {
    // One row that runs three times. A copy of its first outcome reaches the done list after
    // the second was applied, while the row is due and nothing of it is in flight: what a
    // leader that lost its lock while applying that outcome would commit late.
    QueueSpec queue = redis_claim_queue();
    queue.due = "runs < 3";
    queue.on_success = "runs = runs + 1, status = :status";
    E2eSystem sys(queue, 1);
    rowpump::Worker worker(e2e_worker_options(sys, "periodic"));
    const auto runs = [&] { return sys.db.scalar("SELECT runs FROM user_block_status"); };
    const rowpump::Outcome ok = rowpump::Outcome::success({{"status", "1"}});

    const std::optional<rowpump::Task> first = worker.fetch(10s);
    REQUIRE(first);
    REQUIRE(worker.complete(*first, ok));
    REQUIRE(eventually(10s, [&] { return runs() == 1; }));
    const std::optional<rowpump::Task> second = worker.fetch(10s);
    REQUIRE(second);
    CHECK(second->token != first->token);
    // Paused, the queue applies outcomes and pushes nothing: after the second outcome the
    // row is due and not in flight.
    REQUIRE(rowpump_cli({"pause", "-c", sys.config, "users"}).status.success());
    REQUIRE(worker.complete(*second, ok));
    REQUIRE(eventually(10s, [&] { return runs() == 2; }));

    rowpump::protocol::Done late;
    late.task = *first;
    late.verb = rowpump::Verb::success;
    late.values = {{"status", "1"}};
    sys.redis.command({"RPUSH", sys.keys().done, rowpump::protocol::format_done(late)});
    REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "stale") == 1; }));
    CHECK(list_length(sys.redis, sys.keys().done) == 0);
    CHECK(runs() == 2);  // not counted as a third run

    REQUIRE(rowpump_cli({"resume", "-c", sys.config, "users"}).status.success());
    const std::optional<rowpump::Task> third = worker.fetch(10s);
    REQUIRE(third);
    REQUIRE(worker.complete(*third, ok));
    REQUIRE(eventually(10s, [&] { return runs() == 3; }));
    CHECK(queue_stat(sys.redis, "users", "completed") == 3);
}

TEST_CASE(
    "e2e: claim: redis: a leader that takes its lock back after another led learns what that one "
    "pushed",
    "[e2e]") {
    constexpr std::int64_t kFirst = 100;
    E2eSystem sys(redis_claim_queue(), kFirst);
    const auto keys = sys.keys();
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.ready) == kFirst; }));
    auto standby = sys.bed.start_dispatcher(sys.config, "standby.log");
    REQUIRE(
        eventually(10s, [&] { return standby->log().find("standing by") != std::string::npos; }));

    // The leader freezes; the stand-by takes over and pushes new rows; then it freezes too,
    // and its lock lapses. No worker runs: every task stays in the ready list.
    sys.dispatcher->signal(SIGSTOP);
    REQUIRE(eventually(
        10s, [&] { return standby->log().find("took the leader lock") != std::string::npos; }));
    insert_e2e_rows(sys.db, kFirst + 1, kFirst);
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.ready) == 2 * kFirst; }));
    standby->signal(SIGSTOP);
    REQUIRE(eventually(10s, [&] {
        return sys.redis.command({"EXISTS", keys.leader}).integer() == 0;
    }));

    // The first leader wakes and takes the free lock again: it must not push the stand-by's
    // rows a second time. One more row shows it is dispatching again.
    sys.dispatcher->signal(SIGCONT);
    insert_e2e_rows(sys.db, 2 * kFirst + 1, 1);
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.ready) >= 2 * kFirst + 1; }));
    standby->signal(SIGCONT);
    std::set<std::string> ids;
    const auto ready = parse_ready_all(list_all(sys.redis, keys.ready));
    for (const auto& task : ready) ids.insert(task.id);
    INFO("dispatcher log:\n" << sys.dispatcher->log_tail());
    CHECK(ready.size() == static_cast<std::size_t>(2 * kFirst + 1));
    CHECK(ids.size() == ready.size());
    CHECK(queue_stat(sys.redis, "users", "dispatched") == 2 * kFirst + 1);
}
