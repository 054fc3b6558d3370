// End to end, workers misbehaving: one killed with SIGKILL, one reporting after its lease
// ran out, one told to stop mid-run. Every test ends by checking data: every row completed,
// its on_success applied exactly once.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/e2e_worker.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/reply_cut_proxy.hpp"

using namespace rowpump::testing;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

milliseconds since(steady_clock::time_point start) {
    return duration_cast<milliseconds>(steady_clock::now() - start);
}

bool exists(rowpump::redis::Connection& redis, const std::string& key) {
    return redis.command({"EXISTS", key}).integer() == 1;
}

bool is_member(rowpump::redis::Connection& redis, const std::string& set,
               const std::string& member) {
    return redis.command({"SISMEMBER", set, member}).integer() == 1;
}

// Seconds since the last command of a client blocked in BLMOVE, from CLIENT LIST; nullopt
// while no client is blocked there.
std::optional<int> blmove_idle_seconds(rowpump::redis::Connection& redis) {
    std::istringstream clients(redis.command({"CLIENT", "LIST"}).string());
    std::string line;
    while (std::getline(clients, line)) {
        if (line.find(" cmd=blmove") == std::string::npos) continue;
        if (line.find(" flags=b ") == std::string::npos) continue;
        auto idle = line.find(" idle=");
        if (idle != std::string::npos) return std::stoi(line.substr(idle + 6));
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE("e2e: kill -9 of a worker process: its tasks run again within the heartbeat TTL",
          "[e2e]") {
    constexpr std::int64_t kRows = 1500;
    constexpr milliseconds kTtl{2000};
    // With batch 4 the victim also holds tasks it has taken but not started.
    // Claims in Redis with the batch that holds tasks not started yet.
    const auto [victim_batch, claim] =
        GENERATE(table<int, std::string>({{1, "mysql"}, {4, "mysql"}, {4, "redis"}}));
    INFO("victim batch " << victim_batch << ", claim: " << claim);
    QueueSpec queue = e2e_queue();
    queue.claim = claim;
    queue.batch = 50;
    queue.max_backlog = 10;  // tasks taken back queue behind at most this many others
    queue.lease = "5m";      // so only the heartbeat path can bring them back in time
    queue.extra_lines = {"reap_interval: 200ms"};
    E2eSystem sys(queue, kRows);

    TestWorkerSpec spec;
    spec.threads = 4;
    spec.heartbeat_ttl = kTtl;
    spec.work = 40ms;
    spec.worker_id = "victim";
    spec.batch = victim_batch;
    TestWorkerProcess victim(ROWPUMP_TEST_WORKER, sys, spec);
    spec.worker_id = "survivor";
    spec.batch = 1;
    TestWorkerProcess survivor(ROWPUMP_TEST_WORKER, sys, spec);
    const auto keys = sys.keys();

    REQUIRE(eventually(30s, [&] { return victim.handled().size() >= 100; }));
    const auto killed_at = steady_clock::now();
    victim.process().kill();  // SIGKILL, then reaped: no report can follow
    // Read right after the kill rather than just before it: a dead worker's processing list
    // is exactly what it had in hand. Its heartbeat still has at least 2/3 of the TTL to
    // live, so the dispatcher cannot have taken the list back yet.
    const auto held = parse_ready_all(list_all(sys.redis, victim.processing_key()));
    const bool heartbeat_alive = exists(sys.redis, keys.heartbeat("victim"));
    INFO("victim held " << held.size() << " tasks at its death");
    REQUIRE(heartbeat_alive);
    REQUIRE(!held.empty());

    std::map<std::string, std::string> held_token;  // id -> the token the victim held
    for (const auto& t : held) held_token[t.id] = t.token;
    std::map<std::string, milliseconds> handled_again;  // id -> time from the kill
    std::size_t before_heartbeat_lapsed = 0;  // of those, handled while its heartbeat lived
    // A guard, far below the lease (5 min): within it only the heartbeat path brings tasks back.
    const bool all_again = eventually(
        60s,
        [&] {
            const auto now = since(killed_at);
            const auto seen = survivor.handled();
            // Read after the task log: a heartbeat still there now was there when they ran.
            const bool heartbeat_lives = exists(sys.redis, keys.heartbeat("victim"));
            for (const auto& t : seen) {
                auto it = held_token.find(t.id);
                if (it != held_token.end() && t.token != it->second &&
                    handled_again.emplace(t.id, now).second && heartbeat_lives) {
                    ++before_heartbeat_lapsed;
                }
            }
            return handled_again.size() == held_token.size();
        },
        10ms);
    INFO(handled_again.size() << " of " << held.size() << " tasks handled again; "
                              << describe_stats(sys.redis, "users"));
    REQUIRE(all_again);

    milliseconds first = milliseconds::max(), last{0};
    for (const auto& [id, after] : handled_again) {
        first = std::min(first, after);
        last = std::max(last, after);
    }
    WARN(held.size() << " tasks of the killed worker handled again between " << first.count()
                     << " and " << last.count() << " ms after the kill (heartbeat TTL "
                     << kTtl.count() << " ms)");
    // Not before its heartbeat lapsed: the dispatcher takes a worker's tasks back only then.
    CHECK(before_heartbeat_lapsed == 0);
    // Taken back by the heartbeat path (the reap counts them), not by their lease.
    CHECK(queue_stat(sys.redis, "users", "reaped") == static_cast<std::int64_t>(held.size()));

    const bool done = eventually(
        60s, [&] { return sys.rows_left() == 0; }, 100ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(done);
    REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "completed") == kRows; }));
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(sys.rows_claimed() == 0);
    CHECK(queue_stat(sys.redis, "users", "reaped") == static_cast<std::int64_t>(held.size()));
    CHECK(queue_stat(sys.redis, "users", "stale") == 0);
    CHECK(!exists(sys.redis, victim.processing_key()));
    CHECK(!is_member(sys.redis, keys.workers, "victim"));

    // The survivor ran each taken-back task once, as its second attempt.
    std::map<std::string, int> runs;
    for (const auto& t : survivor.handled()) {
        if (held_token.count(t.id) == 0) continue;
        ++runs[t.id];
        CHECK(t.attempt == 2);
    }
    for (const auto& [id, n] : runs) CHECK(n == 1);

    survivor.process().signal(SIGTERM);
    auto status = survivor.process().wait(10s);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
}

TEST_CASE(
    "e2e: a frozen worker loses its tasks to the heartbeat path and its late reports are dropped",
    "[e2e]") {
    constexpr std::int64_t kRows = 1000;
    constexpr milliseconds kTtl{2000};
    QueueSpec queue = e2e_queue();
    queue.batch = 50;
    queue.max_backlog = 10;
    queue.lease = "5m";
    queue.extra_lines = {"reap_interval: 200ms"};
    E2eSystem sys(queue, kRows);

    TestWorkerSpec spec;
    spec.threads = 4;
    spec.heartbeat_ttl = kTtl;
    spec.work = 40ms;
    spec.worker_id = "frozen";
    TestWorkerProcess frozen(ROWPUMP_TEST_WORKER, sys, spec);
    spec.worker_id = "survivor";
    TestWorkerProcess survivor(ROWPUMP_TEST_WORKER, sys, spec);
    const auto keys = sys.keys();

    REQUIRE(eventually(30s, [&] { return frozen.handled().size() >= 100; }));
    // SIGSTOP: the process keeps its connections but sends nothing, heartbeats included,
    // like a worker stuck in a long GC pause or on an overloaded host.
    frozen.process().signal(SIGSTOP);
    const bool reaped = eventually(
        15s, [&] { return queue_stat(sys.redis, "users", "reaped") > 0; }, 20ms);
    INFO(describe_stats(sys.redis, "users"));
    REQUIRE(reaped);
    const std::int64_t taken_back = queue_stat(sys.redis, "users", "reaped");
    CHECK(!is_member(sys.redis, keys.workers, "frozen"));
    frozen.process().signal(SIGCONT);
    // Its handlers finish and report on tasks it no longer holds: Redis drops those reports.
    REQUIRE(eventually(10s,
                       [&] { return frozen.output().find("came too late") != std::string::npos; }));
    // And it carries on as a worker, listed again by its next heartbeat.
    CHECK(eventually(5s, [&] { return is_member(sys.redis, keys.workers, "frozen"); }));

    const bool done = eventually(
        60s, [&] { return sys.rows_left() == 0; }, 100ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(done);
    REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "completed") == kRows; }));
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(queue_stat(sys.redis, "users", "reaped") == taken_back);
    CHECK(queue_stat(sys.redis, "users", "stale") == 0);  // never reached the dispatcher
    CHECK(sys.rows_claimed() == 0);

    for (auto* w : {&frozen, &survivor}) {
        w->process().signal(SIGTERM);
        auto status = w->process().wait(10s);
        INFO("worker " << w->id() << " output:\n" << w->output());
        REQUIRE(status);
        CHECK(status->describe() == "exit code 0");
        CHECK(list_length(sys.redis, w->processing_key()) == 0);
    }
}

TEST_CASE(
    "e2e: a frozen worker whose fetch blocks longer than its heartbeat TTL takes no task after it "
    "is reaped",
    "[e2e]") {
    // Redis serves a blocked BLMOVE of a frozen (or cut-off) client whose connection is still
    // open. If that block outlasts the heartbeat, the dispatcher reaps the worker (and drops
    // it from the workers set) first, and the next task moves into a processing list nobody
    // watches any more: it waits for its lease instead of coming back within the TTL.
    constexpr milliseconds kTtl{1000};
    QueueSpec queue = e2e_queue();
    queue.lease = "20s";
    queue.extra_lines = {"reap_interval: 100ms"};
    E2eSystem sys(queue, 0);
    const auto keys = sys.keys();

    TestWorkerSpec spec;
    spec.heartbeat_ttl = kTtl;
    spec.worker_id = "frozen";
    spec.extra_args = {"--fetch-timeout-ms", "20000"};
    TestWorkerProcess frozen(ROWPUMP_TEST_WORKER, sys, spec);
    // Freeze it early in a block: the SDK may split its fetch timeout into shorter blocks.
    REQUIRE(eventually(
        10s,
        [&] {
            auto idle = blmove_idle_seconds(sys.redis);
            return idle && *idle == 0;
        },
        5ms));
    frozen.process().signal(SIGSTOP);
    REQUIRE(eventually(10s, [&] { return !is_member(sys.redis, keys.workers, "frozen"); }));

    insert_e2e_rows(sys.db, 1, 1);
    spec.worker_id = "survivor";
    spec.extra_args = {};
    TestWorkerProcess survivor(ROWPUMP_TEST_WORKER, sys, spec);
    // A guard, past the lease (20 s): a task lost to the frozen worker comes back by then, and
    // the checks below tell it apart.
    const bool done = eventually(
        60s, [&] { return sys.rows_left() == 0; }, 20ms);
    INFO(describe_stats(sys.redis, "users") << "; frozen worker's processing list: "
                                            << list_length(sys.redis, frozen.processing_key()));
    REQUIRE(done);
    // The row went out once and the survivor ran it: the frozen worker's block had ended
    // before it was reaped, so it took nothing. Fails while the SDK blocks in one BLMOVE for
    // the whole fetch timeout, however long the heartbeat TTL is: the task then moves into
    // the frozen worker's list and is claimed again only when its lease runs out.
    CHECK(queue_stat(sys.redis, "users", "dispatched") == 1);
    CHECK(list_length(sys.redis, frozen.processing_key()) == 0);
    const auto handled = survivor.handled();
    REQUIRE(handled.size() == 1);
    CHECK(handled[0].id == "1");
    CHECK(sys.rows_not_run_once() == 0);
    frozen.process().signal(SIGCONT);
}

TEST_CASE("e2e: a plain consumer reporting after its lease ran out is rejected as stale", "[e2e]") {
    QueueSpec queue = e2e_queue();
    queue.lease = "2s";
    E2eSystem sys(queue, 1);
    const auto keys = sys.keys();

    // The slow one pops the task as a plain consumer (no processing list, no heartbeat): the
    // dispatcher cannot see that it holds it, so its claim ends by its lease alone. (A worker
    // holding a task in its processing list with a live heartbeat keeps it; see
    // test_e2e_waiting.cpp.)
    std::optional<std::string> popped;
    REQUIRE(eventually(10s, [&] {
        popped = sys.redis.command({"LPOP", keys.ready}).optional_string();
        return popped.has_value();
    }));
    std::string error;
    auto first = rowpump::protocol::parse_ready(*popped, error);
    REQUIRE(first);
    rowpump::Worker fast(e2e_worker_options(sys, "fast"));
    auto second = fast.fetch(15s);  // the row comes back once the lease has run out
    REQUIRE(second);
    CHECK(second->id == first->id);
    CHECK(second->token != first->token);
    REQUIRE(fast.complete(*second, rowpump::Outcome::success({{"status", "1"}})));
    REQUIRE(eventually(10s, [&] {
        return sys.db.scalar("SELECT runs FROM user_block_status WHERE user_id = 1") == 1;
    }));

    // The late report reaches the done list; the dispatcher must not apply it.
    sys.redis.command({"RPUSH", keys.done, *popped + " ok status=2"});
    const bool stale =
        eventually(10s, [&] { return queue_stat(sys.redis, "users", "stale") >= 1; });
    INFO(describe_stats(sys.redis, "users"));
    REQUIRE(stale);
    REQUIRE(list_length(sys.redis, keys.done) == 0);
    auto row = sys.db.rows(
        "SELECT status, runs, rp_token, rp_lease_until FROM user_block_status WHERE user_id = 1");
    REQUIRE(row.size() == 1);
    CHECK(row[0][0].value_or("NULL") == "1");  // the fast worker's value, not the late one
    CHECK(row[0][1].value_or("NULL") == "1");  // on_success ran exactly once
    CHECK(row[0][2] == settled_token(second->token));
    CHECK(!row[0][3]);
    CHECK(queue_stat(sys.redis, "users", "completed") == 1);
    CHECK(queue_stat(sys.redis, "users", "stale") == 1);
    CHECK(queue_stat(sys.redis, "users", "dispatched") == 2);
    CHECK(sys.dispatcher->log().find("stale") != std::string::npos);
}

TEST_CASE(
    "e2e: SIGTERM to a worker process under load: it drains and reports every task and exits 0",
    "[e2e]") {
    constexpr std::int64_t kRows = 3000;
    QueueSpec queue = e2e_queue();
    queue.batch = 100;
    queue.max_backlog = 200;
    queue.lease = "5m";  // a task left unreported would hold its row past the test's deadline
    E2eSystem sys(queue, kRows);

    TestWorkerSpec spec;
    spec.threads = 4;
    spec.work = 10ms;
    spec.worker_id = "stopped";
    TestWorkerProcess stopped(ROWPUMP_TEST_WORKER, sys, spec);
    spec.worker_id = "remaining";
    TestWorkerProcess remaining(ROWPUMP_TEST_WORKER, sys, spec);
    const auto keys = sys.keys();

    REQUIRE(eventually(30s, [&] { return stopped.handled().size() >= 300; }));
    REQUIRE(list_length(sys.redis, stopped.processing_key()) > 0);  // it has tasks in hand
    stopped.process().signal(SIGTERM);
    // A guard: it takes one task's work plus one fetch timeout (1 s).
    auto status = stopped.process().wait(60s);
    INFO("worker output:\n" << stopped.output());
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
    // Nothing left in hand, signed off: the dispatcher has nothing to take back.
    CHECK(list_length(sys.redis, stopped.processing_key()) == 0);
    CHECK(!exists(sys.redis, keys.heartbeat("stopped")));
    CHECK(!is_member(sys.redis, keys.workers, "stopped"));

    const bool done = eventually(
        60s, [&] { return sys.rows_left() == 0; }, 100ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(done);
    REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "completed") == kRows; }));
    CHECK(sys.rows_not_run_once() == 0);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["dispatched"] == kRows);
    CHECK(stats["reaped"] == 0);
    CHECK(stats["stale"] == 0);

    // Every row handled once, by one worker or the other.
    std::set<std::string> ids;
    std::size_t lines = 0;
    for (auto* w : {&stopped, &remaining}) {
        for (const auto& t : w->handled()) {
            ids.insert(t.id);
            ++lines;
        }
    }
    CHECK(lines == static_cast<std::size_t>(kRows));
    CHECK(ids.size() == static_cast<std::size_t>(kRows));

    remaining.process().signal(SIGTERM);
    auto remaining_status = remaining.process().wait(10s);
    REQUIRE(remaining_status);
    CHECK(remaining_status->describe() == "exit code 0");
}

TEST_CASE("e2e: stop() of an in-process worker under load: run() returns with every task reported",
          "[e2e]") {
    constexpr std::int64_t kRows = 2000;
    QueueSpec queue = e2e_queue();
    queue.batch = 100;
    queue.max_backlog = 200;
    queue.lease = "5m";
    E2eSystem sys(queue, kRows);

    rowpump::WorkerOptions options = e2e_worker_options(sys, "in-process");
    options.threads = 4;
    rowpump::Worker worker(options);
    std::atomic<int> handled{0};
    std::atomic<bool> run_returned{false};
    std::exception_ptr failure;
    std::thread runner([&] {
        try {
            worker.run([&](const rowpump::Task&) {
                std::this_thread::sleep_for(5ms);  // the handler's work
                ++handled;
                return rowpump::Outcome::success({{"status", "1"}});
            });
        } catch (...) {
            failure = std::current_exception();
        }
        run_returned = true;
    });
    const bool busy = eventually(30s, [&] { return handled >= 200; });
    worker.stop();
    // A guard: run() returns after the task in hand plus one fetch timeout (1 s).
    const bool returned = eventually(60s, [&] { return run_returned.load(); });
    if (!returned) {  // joining would hang the test run: end it with a message instead
        std::fputs("worker.run() did not return within 60 s of stop()\n", stderr);
        std::abort();
    }
    runner.join();
    REQUIRE(!failure);
    REQUIRE(busy);
    const auto keys = sys.keys();
    CHECK(list_length(sys.redis, keys.processing("in-process")) == 0);
    CHECK(!is_member(sys.redis, keys.workers, "in-process"));
    // Everything it handled reaches MySQL: exactly the rows it ran are done, once each.
    REQUIRE(eventually(10s, [&] {
        return sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 1") ==
               handled.load();
    }));
    // The counter is written to Redis just after the MySQL commit the rows show.
    CHECK(eventually(
        10s, [&] { return queue_stat(sys.redis, "users", "completed") == handled.load(); }));

    TestWorkerSpec spec;
    spec.worker_id = "finisher";
    spec.threads = 4;
    TestWorkerProcess finisher(ROWPUMP_TEST_WORKER, sys, spec);
    const bool done = eventually(
        60s, [&] { return sys.rows_left() == 0; }, 100ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(done);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(queue_stat(sys.redis, "users", "reaped") == 0);
    CHECK(queue_stat(sys.redis, "users", "stale") == 0);
    CHECK(static_cast<std::int64_t>(finisher.handled().size()) + handled.load() == kRows);
}

TEST_CASE(
    "e2e: kill -9 of the dispatcher mid-run: a new one finishes and no outcome is applied twice",
    "[e2e]") {
    constexpr std::int64_t kRows = 5000;
    QueueSpec queue = e2e_queue();
    queue.batch = 200;
    queue.max_backlog = 1000;
    queue.lease = "10s";  // rows claimed but never pushed come back after this
    E2eSystem sys(queue, kRows);

    TestWorkerSpec spec;
    spec.threads = 4;
    spec.work = 2ms;
    spec.worker_id = "w1";
    TestWorkerProcess w1(ROWPUMP_TEST_WORKER, sys, spec);
    spec.worker_id = "w2";
    TestWorkerProcess w2(ROWPUMP_TEST_WORKER, sys, spec);

    REQUIRE(eventually(30s, [&] { return queue_stat(sys.redis, "users", "completed") >= 1000; }));
    sys.dispatcher->process().kill();
    // Workers carry on with what is in Redis; their reports wait in the done list.
    const std::int64_t left_at_kill = sys.rows_left();
    CHECK(left_at_kill > 0);
    auto second = sys.bed.start_dispatcher(sys.config, "dispatcher-2.log");
    const bool done = eventually(
        45s, [&] { return sys.rows_left() == 0; }, 100ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\n"
                                            << second->log_tail());
    REQUIRE(done);
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, sys.keys().done) == 0; }));
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(sys.rows_claimed() == 0);
    CHECK(list_length(sys.redis, sys.keys().bad) == 0);
    CHECK(second->running());

    for (auto* w : {&w1, &w2}) {
        w->process().signal(SIGTERM);
        auto status = w->process().wait(10s);
        REQUIRE(status);
        CHECK(status->describe() == "exit code 0");
    }
}

TEST_CASE(
    "e2e: a worker that loses the reply to its fetch gives the fetched task back instead of "
    "holding it unrun",
    "[e2e]") {
    // Redis moves the task into the worker's processing list, then the connection breaks
    // before the reply arrives (a network failure, a Redis shutdown). The worker lives on and
    // keeps its heartbeat, so the dispatcher counts the task as held and renews its lease:
    // only the worker itself can notice that none of its threads holds it.
    QueueSpec queue = e2e_queue();
    queue.lease = "3s";
    queue.extra_lines = {"reap_interval: 200ms"};
    E2eSystem sys(queue, 0);
    ReplyCutProxy proxy(sys.bed.redis.port(), "\r\n4242:");

    TestWorkerSpec spec;
    spec.worker_id = "cut";
    spec.heartbeat_ttl = 2000ms;
    spec.extra_args = {"--redis-port", std::to_string(proxy.port())};
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);
    REQUIRE(eventually(10s, [&] { return is_member(sys.redis, sys.keys().workers, "cut"); }));

    insert_e2e_rows(sys.db, 4242, 1);
    REQUIRE(eventually(10s, [&] { return proxy.cut(); }));
    const bool done = eventually(
        20s, [&] { return sys.rows_left() == 0; }, 50ms);
    INFO(describe_stats(sys.redis, "users")
         << "; " << sys.table_summary() << "; processing list: "
         << list_length(sys.redis, worker.processing_key()) << "; worker output:\n"
         << worker.output());
    REQUIRE(done);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(worker.handled().size() == 1);
}
