// Leases against the database's clock: a change of the server's time zone, and a real step
// of its wall clock (MariaDB run under libfaketime, whose offset the test moves, as NTP
// stepping the database host would), while a worker holds 20 tasks. Neither may make a held
// task look abandoned: each row is dispatched and run once.

#include <chrono>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;

namespace {

constexpr std::int64_t kRows = 20;

// A worker with a thread per row, each task taking `work`: once it has taken them, it holds
// all 20 for that long.
TestWorkerSpec holding_worker() {
    TestWorkerSpec spec;
    spec.worker_id = "holder";
    spec.threads = static_cast<int>(kRows);
    spec.work = std::chrono::seconds(8);
    return spec;
}

// Every row completed once, by one run of its one dispatch.
void check_each_dispatched_once(E2eSystem& sys, TestWorkerProcess& worker) {
    const auto keys = sys.keys();
    const bool finished = eventually(60s, [&] {
        return sys.rows_left() == 0 && list_length(sys.redis, keys.ready) == 0 &&
               list_length(sys.redis, worker.processing_key()) == 0 &&
               list_length(sys.redis, keys.done) == 0;
    });
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\ndispatcher log:\n"
                                            << sys.dispatcher->log_tail());
    CHECK(finished);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["dispatched"] == kRows);
    CHECK(stats["stale"] == 0);
    CHECK(stats["completed"] == kRows);
    CHECK(worker.handled().size() == static_cast<std::size_t>(kRows));
    CHECK(sys.rows_not_run_once() == 0);
}

}  // namespace

TEST_CASE("lease: a time-zone change of the database while 20 tasks are held dispatches none again",
          "[e2e][lease]") {
    E2eSystem sys(e2e_queue(), kRows);  // lease 60s
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, holding_worker());
    REQUIRE(
        eventually(10s, [&] { return list_length(sys.redis, worker.processing_key()) == kRows; }));

    // Five hours east, as a server in local time sees a change of zone (a daylight-saving
    // change is one hour). A session keeps the zone it started with: the dispatcher's
    // sessions are broken, so that it reconnects into the new zone.
    auto root = sys.bed.mysql.connect_root();
    root.exec("SET GLOBAL time_zone = '+05:00'");
    const auto ours = sys.db.scalar("SELECT CONNECTION_ID()");
    for (const auto& id :
         root.column("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '" +
                     std::string(MariaDb::kUser) + "' AND ID <> " + std::to_string(ours))) {
        try {
            root.exec("KILL CONNECTION " + id);
        } catch (const std::exception&) {
            // gone meanwhile
        }
    }
    REQUIRE(eventually(20s, [&] { return sys.dispatcher->log_count("recovered after") > 0; }));
    check_each_dispatched_once(sys, worker);
}

TEST_CASE(
    "lease: a forward step of the database clock smaller than the lease dispatches no held task "
    "again",
    "[e2e][lease]") {
    constexpr std::int64_t kStepSeconds = 59;  // lease 60s
    E2eSystem sys(e2e_queue(), kRows, ServerClock::stepped);
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, holding_worker());
    REQUIRE(
        eventually(10s, [&] { return list_length(sys.redis, worker.processing_key()) == kRows; }));
    // Once every lease ends within the step, the step makes every lease look ended.
    REQUIRE(eventually(10s, [&] {
        return sys.db.scalar(
                   "SELECT COUNT(*) FROM user_block_status WHERE rp_lease_until <= "
                   "UTC_TIMESTAMP(3) + INTERVAL " +
                   std::to_string(kStepSeconds) + " SECOND") == kRows;
    }));
    const auto before = sys.db.scalar("SELECT UNIX_TIMESTAMP()");
    sys.bed.mysql.set_clock_offset(std::chrono::seconds(kStepSeconds));
    REQUIRE(sys.db.scalar("SELECT UNIX_TIMESTAMP()") - before >= kStepSeconds);
    check_each_dispatched_once(sys, worker);
    // Kept by the renewal look, not by chance: every held lease was renewed after the step.
    CHECK(queue_stat(sys.redis, "users", "renewed") >= kRows);
}
