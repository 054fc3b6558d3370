// End to end, workers slower than the lease: tasks wait in the ready list (or in a worker's
// hands) for longer than the lease. A task that waits is never written off: each row is
// dispatched once, its handler runs once, and no outcome is refused as stale.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/protocol_worker.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;
using std::chrono::milliseconds;

namespace {

constexpr std::int64_t kRows = 1000;
constexpr milliseconds kWork{11};  // one worker at ~90 tasks/s: the last row waits ~11 s

// 1,000 rows, lease 2 s, at most 500 waiting in the ready list: with one worker at ~90
// tasks/s most rows wait several leases before a worker takes them.
QueueSpec slow_queue() {
    QueueSpec queue = e2e_queue();
    queue.lease = "2s";
    queue.max_backlog = 500;
    return queue;
}

// Waits for every row to complete and checks, from the table, the queue's counters and the
// worker's own record, that nothing ran or went out twice. `runs` gives how often the
// worker ran each row's handler.
void check_each_row_once(E2eSystem& sys, std::chrono::steady_clock::time_point started,
                         const std::function<std::map<std::string, int>()>& runs) {
    // A guard only: with every row run once this takes ~11 s.
    const bool done = eventually(
        120s, [&] { return queue_stat(sys.redis, "users", "completed") >= kRows; }, 50ms);
    const auto took =
        std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(done);
    WARN(kRows << " rows at ~90 tasks/s with lease 2 s took " << took.count()
               << " ms (ideal ~11,000 ms); " << describe_stats(sys.redis, "users"));
    CHECK(sys.rows_left() == 0);
    CHECK(sys.rows_not_run_once() == 0);  // on_success applied once per row
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["completed"] == kRows);
    CHECK(stats["dispatched"] == kRows);  // no row was claimed and pushed a second time
    CHECK(stats["stale"] == 0);
    CHECK(stats["reaped"] == 0);
    CHECK(stats["renewed"] > 0);  // the waiting rows did outlive their first lease
    CHECK(list_length(sys.redis, sys.keys().ready) == 0);  // no copy left over
    // The worker's side: each row's handler ran once.
    const auto handled = runs();
    CHECK(handled.size() == static_cast<std::size_t>(kRows));
    int twice = 0;
    for (const auto& [id, n] : handled) twice += n != 1;
    CHECK(twice == 0);
}

}  // namespace

TEST_CASE("e2e: tasks waiting longer than the lease for a slow SDK worker run once each", "[e2e]") {
    E2eSystem sys(slow_queue(), kRows);
    TestWorkerSpec spec;
    spec.worker_id = "slow";
    spec.work = kWork;
    const auto started = std::chrono::steady_clock::now();
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);

    check_each_row_once(sys, started, [&] {
        std::map<std::string, int> runs;
        for (const auto& task : worker.handled()) ++runs[task.id];
        return runs;
    });
    worker.process().signal(SIGTERM);
    auto status = worker.process().wait(10s);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
}

TEST_CASE(
    "e2e: tasks waiting longer than the lease for a slow worker speaking the plain protocol run "
    "once each",
    "[e2e]") {
    E2eSystem sys(slow_queue(), kRows);
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, sys.keys().ready) > 0; }));
    ProtocolWorkerOptions options;
    options.redis = sys.bed.redis.options();
    options.worker_id = "plain";
    options.work = kWork;
    const auto started = std::chrono::steady_clock::now();
    ProtocolWorker worker(options);

    check_each_row_once(sys, started, [&] { return worker.runs(); });
    CHECK(worker.refused() == 0);
    INFO(worker.last_error());
    worker.stop();
    CHECK(list_length(sys.redis, sys.keys().processing("plain")) == 0);
}
