// A step of the dispatcher host's wall clock (NTP stepping it, an operator's `date -s`): the
// dispatcher runs under libfaketime, whose offset the test moves back an hour while rows flow
// under a `rate`, forward again, and back once more while the queue is idle. Every timer of
// the loop (pacing, rate, backoff, lease looks, leader renewals) runs on the monotonic clock,
// leases on the database's and the leader lock's TTL on Redis's, so nothing may change: each
// row dispatched and run once, no stall (the rows after each step complete), no leader change.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;

namespace {

// The timestamps of the log's lines ("2026-11-26 11:35:33.478 info ..."), in the order written.
std::vector<std::string> log_times(const std::string& log) {
    std::vector<std::string> times;
    std::size_t at = 0;
    while (at < log.size()) {
        const auto end = log.find('\n', at);
        const auto line = log.substr(at, end == std::string::npos ? std::string::npos : end - at);
        if (line.size() > 23 && line[4] == '-' && line[10] == ' ')
            times.push_back(line.substr(0, 23));
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return times;
}

}  // namespace

TEST_CASE(
    "host clock: a step back of the dispatcher's wall clock dispatches nothing again and "
    "stalls nothing",
    "[e2e][clock]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    INFO("claim: " << claim);
    constexpr std::int64_t kRows = 300, kLater = 50;
    QueueSpec queue = e2e_queue();
    queue.claim = claim;
    queue.rate = "60/s";      // the rate limiter's pacing meets the step
    queue.poll_max = "1s";    // and so does the idle backoff
    E2eSystem sys(queue, 0);  // its dispatcher has the real clock: replaced before any row
    REQUIRE(eventually(10s, [&] {
        return sys.dispatcher->log().find("took the leader lock") != std::string::npos;
    }));
    sys.dispatcher->signal(SIGTERM);  // it gives the leader lock up
    REQUIRE(sys.dispatcher->wait(10s));
    const std::string offset_file = sys.bed.dir.file("dispatcher-clock-offset");
    sys.dispatcher = std::make_unique<Dispatcher>(sys.config, sys.bed.dir.file("stepped.log"),
                                                  stepped_clock_env(offset_file));
    const auto keys = sys.keys();
    REQUIRE(eventually(10s, [&] {
        return sys.dispatcher->log().find("took the leader lock") != std::string::npos;
    }));
    const std::string leader =
        sys.redis.command({"GET", keys.leader}).optional_string().value_or("");
    REQUIRE(!leader.empty());

    insert_e2e_rows(sys.db, 1, kRows);
    TestWorkerSpec spec;
    spec.worker_id = "clock";
    spec.threads = 4;
    spec.batch = 8;
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\ndispatcher log:\n"
                                            << sys.dispatcher->log_tail());

    // An hour back once a third is done, forward again at two thirds: the rows go on.
    REQUIRE(eventually(
        60s, [&] { return sys.rows_left() <= kRows * 2 / 3; }, 20ms));
    write_clock_offset(offset_file, -std::chrono::hours(1));
    REQUIRE(eventually(
        60s, [&] { return sys.rows_left() <= kRows / 3; }, 20ms));
    write_clock_offset(offset_file, std::chrono::seconds(0));
    REQUIRE(eventually(60s, [&] { return sys.rows_left() == 0; }));

    // Idle (sleeping up to poll.max) when the clock goes back an hour again: rows that come
    // later are still dispatched.
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, keys.ready) == 0; }));
    write_clock_offset(offset_file, -std::chrono::hours(1));
    insert_e2e_rows(sys.db, kRows + 1, kLater);
    REQUIRE(eventually(60s, [&] { return sys.rows_left() == 0; }));
    REQUIRE(eventually(
        10s, [&] { return queue_stat(sys.redis, "users", "completed") == kRows + kLater; }));

    // The dispatcher's clock did go back (its log's timestamps say so), and nothing changed.
    const auto times = log_times(sys.dispatcher->log());
    REQUIRE(!times.empty());
    CHECK(times.back() < times.front());
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(worker.handled().size() == static_cast<std::size_t>(kRows + kLater));
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["dispatched"] == kRows + kLater);
    CHECK(stats["stale"] == 0);
    CHECK(sys.redis.command({"GET", keys.leader}).optional_string().value_or("") == leader);
    CHECK(sys.dispatcher->running());
    CHECK(sys.dispatcher->log_count("took the leader lock") == 1);
    CHECK(sys.dispatcher->log().find(" error ") == std::string::npos);
}
