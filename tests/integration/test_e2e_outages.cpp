// End to end, outcomes first after an outage: while MySQL or the dispatcher is away for
// longer than the lease, workers keep completing tasks. When the dispatcher is back, the
// outcomes waiting in Redis are applied before any row they are about can be claimed
// again: none is lost or refused as stale, and no handler runs twice. A dispatcher that
// crashes between committing outcomes and acknowledging them is also covered.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

constexpr std::int64_t kRows = 3000;
constexpr auto kOutage = 8s;  // longer than the lease, as a redeploy or a MySQL restart is

// Lease 3 s; every row goes to the ready list at once, and two threads at ~200 tasks/s
// take about 15 s for all of them, so they keep completing throughout the outage.
QueueSpec outage_queue(const std::string& claim) {
    QueueSpec queue = e2e_queue();
    queue.claim = claim;
    queue.lease = "3s";
    queue.max_backlog = 5000;
    return queue;
}

TestWorkerSpec outage_worker() {
    TestWorkerSpec spec;
    spec.worker_id = "steady";
    spec.threads = 2;
    spec.work = milliseconds(9);
    return spec;
}

// Waits until the outage has lasted kOutage and the worker has queued more outcomes than
// the dispatcher applies in one cycle.
void outlast_outage(E2eSystem& sys, steady_clock::time_point began) {
    REQUIRE(eventually(30s, [&] { return list_length(sys.redis, sys.keys().done) > 1000; }));
    std::this_thread::sleep_until(began + kOutage);  // the outage itself, not a guess
}

void check_each_row_once(E2eSystem& sys, TestWorkerProcess& worker) {
    const bool done = eventually(
        60s, [&] { return queue_stat(sys.redis, "users", "completed") >= kRows; }, 50ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(done);
    CHECK(sys.rows_left() == 0);
    CHECK(sys.rows_not_run_once() == 0);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["completed"] == kRows);
    CHECK(stats["stale"] == 0);
    CHECK(stats["dispatched"] == kRows);
    std::map<std::string, int> runs;
    for (const auto& task : worker.handled()) ++runs[task.id];
    CHECK(runs.size() == static_cast<std::size_t>(kRows));
    int twice = 0;
    for (const auto& [id, n] : runs) twice += n != 1;
    CHECK(twice == 0);
}

}  // namespace

TEST_CASE("e2e: MySQL down longer than the lease: no outcome is lost or stale, no task runs twice",
          "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    INFO("claim: " << claim);
    E2eSystem sys(outage_queue(claim), kRows);
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, outage_worker());
    REQUIRE(eventually(30s, [&] { return queue_stat(sys.redis, "users", "completed") >= 300; }));

    const auto began = steady_clock::now();
    sys.bed.mysql.stop();
    outlast_outage(sys, began);
    sys.bed.mysql.start();
    sys.db = sys.bed.db();

    check_each_row_once(sys, worker);
}

TEST_CASE(
    "e2e: the dispatcher stopped longer than the lease: no outcome is lost or stale, no task runs "
    "twice",
    "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    INFO("claim: " << claim);
    E2eSystem sys(outage_queue(claim), kRows);
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, outage_worker());
    REQUIRE(eventually(30s, [&] { return queue_stat(sys.redis, "users", "completed") >= 300; }));

    const auto began = steady_clock::now();
    sys.dispatcher->signal(SIGTERM);
    REQUIRE(sys.dispatcher->wait(10s));
    outlast_outage(sys, began);
    sys.dispatcher = sys.bed.start_dispatcher(sys.config, "dispatcher-again.log");

    check_each_row_once(sys, worker);
}

TEST_CASE(
    "e2e: outcomes committed by a dispatcher that crashed before acknowledging them count as "
    "completed when applied again",
    "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    INFO("claim: " << claim);
    constexpr std::int64_t kFew = 300;
    QueueSpec queue = e2e_queue();
    queue.claim = claim;
    queue.lease = "60s";
    E2eSystem sys(queue, kFew);
    const auto keys = sys.keys();
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.ready) == kFew; }));

    // Outcomes wait in the done list while the dispatcher is frozen.
    sys.dispatcher->signal(SIGSTOP);
    TestWorkerSpec spec;
    spec.worker_id = "quick";
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);
    REQUIRE(eventually(20s, [&] { return list_length(sys.redis, keys.done) == kFew; }));
    worker.process().signal(SIGTERM);
    REQUIRE(worker.process().wait(10s));

    // Redis refuses writes from now on (with no replica, min-replicas-to-write refuses every
    // write, also a script's, while the done list's reading script, which writes nothing here,
    // still runs): the dispatcher reads the done list and commits the outcomes in MySQL, but
    // cannot acknowledge them. Then it crashes.
    sys.redis.command({"CONFIG", "SET", "min-replicas-to-write", "1"});
    sys.dispatcher->signal(SIGCONT);
    const bool committed = eventually(20s, [&] { return sys.rows_left() == 0; });
    sys.dispatcher->process().kill();
    sys.redis.command({"CONFIG", "SET", "min-replicas-to-write", "0"});
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(committed);
    REQUIRE(list_length(sys.redis, keys.done) == kFew);  // none acknowledged
    CHECK(queue_stat(sys.redis, "users", "completed") == 0);

    // The next dispatcher applies the same batch again: its outcomes are recognised as
    // applied already, counted once as completed, and change nothing.
    sys.dispatcher = sys.bed.start_dispatcher(sys.config, "dispatcher-again.log");
    REQUIRE(eventually(30s, [&] { return list_length(sys.redis, keys.done) == 0; }));
    REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "completed") == kFew; }));
    CHECK(queue_stat(sys.redis, "users", "again") == kFew);  // the stats counter, not a log line
    CHECK(queue_stat(sys.redis, "users", "stale") == 0);
    CHECK(sys.rows_not_run_once() == 0);
}
