// End to end with the Node.js worker SDK (worker-sdk/node): its conformance worker
// (conformance-worker.js) against a real dispatcher, MariaDB and Redis. Each phase starts the
// workers it needs and adds rows only once they run, so which worker handles which row is
// decided by the data, not by timing; every handler run goes to the workers' task logs (the
// ledger), and the table's `runs` column counts the successes applied.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/reply_cut_proxy.hpp"

using namespace rowpump::testing;

namespace {

struct RowState {
    std::string status, runs, attempts, last_error;
    bool dead = false;
};

RowState row_state(MysqlClient& db, std::int64_t id) {
    auto rows = db.rows(
        "SELECT status, runs, rp_attempts, rp_last_error, rp_dead_at IS NOT NULL FROM "
        "user_block_status WHERE user_id = " +
        std::to_string(id));
    if (rows.size() != 1) throw std::runtime_error("row " + std::to_string(id) + " is missing");
    const Row& r = rows[0];
    return {r[0].value_or("NULL"), r[1].value_or("NULL"), r[2].value_or("NULL"),
            r[3].value_or("NULL"), r[4].value_or("0") == "1"};
}

// Rows still to do: not done, not dead.
std::int64_t rows_pending(E2eSystem& sys) {
    return sys.db.scalar(
        "SELECT COUNT(*) FROM user_block_status WHERE status = 0 AND rp_dead_at IS NULL");
}

bool exists(rowpump::redis::Connection& redis, const std::string& key) {
    return redis.command({"EXISTS", key}).integer() == 1;
}

bool is_member(rowpump::redis::Connection& redis, const std::string& set,
               const std::string& member) {
    return redis.command({"SISMEMBER", set, member}).integer() == 1;
}

// A conformance worker process with its flags; waits for its "worker_id=" line.
std::unique_ptr<TestWorkerProcess> start_worker(E2eSystem& sys, const std::string& id,
                                                std::vector<std::string> extra, int threads = 1,
                                                std::chrono::milliseconds work = {}) {
    TestWorkerSpec spec;
    spec.worker_id = id;
    spec.threads = threads;
    spec.batch = 0;  // adaptive, the SDK's default
    spec.heartbeat_ttl = std::chrono::milliseconds(1500);
    spec.work = work;
    spec.extra_args = std::move(extra);
    auto worker = std::make_unique<TestWorkerProcess>(ROWPUMP_NODE_WORKER, sys, spec);
    const bool started = eventually(
        20s, [&] { return worker->output().find("worker_id=" + id) != std::string::npos; });
    INFO(id << " output:\n" << worker->output());
    REQUIRE(started);
    return worker;
}

// Waits for a worker that stops by itself (--max-tasks) to end with exit code 0.
void require_clean_exit(TestWorkerProcess& worker, std::chrono::milliseconds timeout = 20s) {
    auto status = worker.process().wait(timeout);
    INFO(worker.id() << " output:\n" << worker.output());
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
}

}  // namespace

TEST_CASE("e2e: the Node.js worker SDK runs the protocol end to end", "[e2e][node]") {
    constexpr std::int64_t kRows = 200;
    QueueSpec queue = e2e_queue();
    queue.batch = 50;
    queue.lease = "5m";  // only the heartbeat path can bring a killed worker's tasks back in time
    queue.extra_lines = {"reap_interval: 200ms",
                         "retry: { base: 100ms, cap: 200ms, max_attempts: 5 }"};
    E2eSystem sys(queue, kRows);
    const auto keys = sys.keys();
    std::vector<std::unique_ptr<TestWorkerProcess>> ledger;  // every worker that reports ok

    // 200 rows, each done exactly once, by 4 concurrent handlers.
    auto main = start_worker(sys, "node-main", {}, 4);
    const bool done = eventually(
        45s, [&] { return sys.rows_left() == 0; }, 100ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\nworker output:\n"
                                            << main->output());
    REQUIRE(done);
    REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "completed") == kRows; }));
    CHECK(sys.rows_not_run_once() == 0);
    std::set<std::string> ids;
    for (const auto& t : main->handled()) {
        CHECK(ids.insert(t.id).second);
        CHECK(t.attempt == 1);
    }
    CHECK(ids.size() == kRows);
    CHECK(is_member(sys.redis, keys.workers, "node-main"));
    CHECK(exists(sys.redis, keys.heartbeat("node-main")));
    main->process().signal(SIGTERM);
    require_clean_exit(*main);
    CHECK(!exists(sys.redis, keys.heartbeat("node-main")));
    CHECK(!is_member(sys.redis, keys.workers, "node-main"));
    ledger.push_back(std::move(main));

    // Retry, then ok: the first worker asks for a retry, the second gets attempt 2.
    auto retrier = start_worker(
        sys, "node-retrier", {"--fail-mode", "retry", "--retry-delay-ms", "0", "--max-tasks", "1"});
    insert_e2e_rows(sys.db, 1001, 1);
    require_clean_exit(*retrier);
    REQUIRE(retrier->handled().size() == 1);
    CHECK(retrier->handled()[0].id == "1001");
    CHECK(retrier->handled()[0].attempt == 1);
    REQUIRE(eventually(10s, [&] { return row_state(sys.db, 1001).attempts == "1"; }));
    CHECK(row_state(sys.db, 1001).last_error == "test worker: retry requested");
    auto finisher = start_worker(sys, "node-finisher", {"--max-tasks", "1"});
    require_clean_exit(*finisher);
    REQUIRE(finisher->handled().size() == 1);
    CHECK(finisher->handled()[0].id == "1001");
    CHECK(finisher->handled()[0].attempt == 2);
    REQUIRE(eventually(10s, [&] { return row_state(sys.db, 1001).runs == "1"; }));
    ledger.push_back(std::move(finisher));

    // Fail: the row is dead at once.
    auto failer = start_worker(sys, "node-failer", {"--fail-mode", "fail", "--max-tasks", "1"});
    insert_e2e_rows(sys.db, 1002, 1);
    require_clean_exit(*failer);
    REQUIRE(eventually(10s, [&] { return row_state(sys.db, 1002).dead; }));
    CHECK(row_state(sys.db, 1002).last_error == "test worker: fail requested");
    CHECK(row_state(sys.db, 1002).runs == "0");
    CHECK(row_state(sys.db, 1002).attempts == "1");

    // A handler that never answers: past --timeout-ms its task is a retry with reason timeout.
    auto hanger = start_worker(sys, "node-hanger",
                               {"--fail-mode", "hang", "--timeout-ms", "300", "--max-tasks", "1"});
    insert_e2e_rows(sys.db, 1003, 1);
    require_clean_exit(*hanger);
    REQUIRE(hanger->handled().size() == 1);
    CHECK(hanger->handled()[0].id == "1003");
    REQUIRE(eventually(10s, [&] { return row_state(sys.db, 1003).attempts == "1"; }));
    CHECK(row_state(sys.db, 1003).last_error == "timeout");
    CHECK(row_state(sys.db, 1003).runs == "0");

    // SIGKILL with tasks in hand: a second worker takes them back and runs each once, as its
    // next attempt (row 1003, the timed-out one, may be among them).
    auto victim = start_worker(sys, "node-victim", {}, 4, std::chrono::milliseconds(60000));
    insert_e2e_rows(sys.db, 2001, 20);
    REQUIRE(eventually(20s, [&] { return list_length(sys.redis, victim->processing_key()) == 4; }));
    victim->process().kill();
    const auto held = parse_ready_all(list_all(sys.redis, victim->processing_key()));
    REQUIRE(held.size() == 4);
    auto survivor = start_worker(sys, "node-survivor", {}, 4);
    const bool all_done = eventually(
        30s, [&] { return rows_pending(sys) == 0; }, 100ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(all_done);
    std::map<std::string, int> runs;
    for (const auto& t : survivor->handled()) ++runs[t.id];
    for (const auto& task : held) {
        CHECK(runs[task.id] == 1);
        for (const auto& t : survivor->handled()) {
            if (t.id == task.id) CHECK(t.attempt == task.attempt + 1);
        }
    }
    CHECK(victim->handled().empty());  // killed mid-task: it reported nothing
    CHECK(eventually(10s, [&] { return queue_stat(sys.redis, "users", "reaped") == 4; }));
    CHECK(!exists(sys.redis, victim->processing_key()));
    CHECK(!is_member(sys.redis, keys.workers, "node-victim"));
    survivor->process().signal(SIGTERM);
    require_clean_exit(*survivor);
    ledger.push_back(std::move(survivor));

    // SIGTERM with tasks in hand: they finish and are reported, then the worker signs off.
    // Each task first extends its claim past the queue's lease of 5 minutes.
    auto drainer = start_worker(sys, "node-drainer", {"--extend-ms", "600000"}, 4,
                                std::chrono::milliseconds(5000));
    insert_e2e_rows(sys.db, 3001, 4);
    REQUIRE(
        eventually(20s, [&] { return list_length(sys.redis, drainer->processing_key()) == 4; }));
    CHECK(eventually(4s, [&] {
        return sys.db.scalar(
                   "SELECT COUNT(*) FROM user_block_status WHERE user_id BETWEEN 3001 AND 3004 "
                   "AND rp_lease_until > NOW(3) + INTERVAL 8 MINUTE") == 4;
    }));
    CHECK(drainer->handled().empty());  // all 4 still working when the signal comes
    drainer->process().signal(SIGTERM);
    require_clean_exit(*drainer, 15s);
    CHECK(drainer->handled().size() == 4);
    CHECK(list_length(sys.redis, drainer->processing_key()) == 0);
    CHECK(!exists(sys.redis, keys.heartbeat("node-drainer")));
    CHECK(!is_member(sys.redis, keys.workers, "node-drainer"));
    ledger.push_back(std::move(drainer));

    // A fetch whose reply is lost (the connection breaks after Redis moved the task): the
    // worker finds the task in its processing list, held by no slot, and gives it back.
    ReplyCutProxy proxy(sys.bed.redis.port(), "\r\n4242:");
    auto cut = start_worker(sys, "node-cut", {"--redis-port", std::to_string(proxy.port())});
    insert_e2e_rows(sys.db, 4242, 1);
    REQUIRE(eventually(10s, [&] { return proxy.cut(); }));
    const bool given_back = eventually(
        20s, [&] { return rows_pending(sys) == 0; }, 50ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "; worker output:\n"
                                            << cut->output());
    REQUIRE(given_back);
    CHECK(cut->handled().size() == 1);
    CHECK(cut->output().find("gave back 1 task(s) that a fetch had moved into") !=
          std::string::npos);
    cut->process().signal(SIGTERM);
    require_clean_exit(*cut);
    ledger.push_back(std::move(cut));

    // The ledger: every row but the dead one succeeded exactly once, in the table and in the
    // logs of the workers that report ok; nothing was malformed or stale.
    REQUIRE(eventually(10s, [&] { return rows_pending(sys) == 0; }));
    CHECK(sys.db.scalar(
              "SELECT COUNT(*) FROM user_block_status WHERE runs <> 1 AND user_id <> 1002") == 0);
    std::map<std::string, int> successes;
    for (const auto& worker : ledger) {
        for (const auto& t : worker->handled()) ++successes[t.id];
    }
    const auto rows = sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE user_id <> 1002");
    CHECK(static_cast<std::int64_t>(successes.size()) == rows);
    for (const auto& [id, n] : successes) {
        INFO("row " << id);
        CHECK(n == 1);
    }
    CHECK(successes.count("1002") == 0);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["bad"] == 0);
    CHECK(stats["stale"] == 0);
    CHECK(stats["dead"] == 1);
    CHECK(list_length(sys.redis, keys.bad) == 0);
}
