// The worker SDK against a real redis-server of the test's own; the dispatcher's side
// (ready messages, the meta hash, the reap script) is played by the test.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/common/redis/redis.hpp"
#include "rowpump/testing/e2e_worker.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/servers.hpp"
#include "rowpump/worker.hpp"

namespace {

using namespace std::chrono_literals;
using rowpump::Outcome;
using rowpump::Task;
using rowpump::testing::eventually;
using rowpump::testing::RunningWorker;

// "<16 hex>-<attempt>-<hex>", shaped as the dispatcher makes them.
std::string token_for(long id, int attempt = 1) {
    char row[32];
    std::snprintf(row, sizeof row, "%lX", id);
    return "0123456789ABCDEF-" + std::to_string(attempt) + "-" + row;
}

std::string ready_for(long id, int attempt = 1) {
    return std::to_string(id) + ":" + token_for(id, attempt);
}

// Lines the worker logs, kept for assertions.
class LogLines {
public:
    void add(const std::string& line) {
        std::lock_guard<std::mutex> lock(mutex_);
        lines_.push_back(line);
    }
    bool contains(const std::string& text) const {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::any_of(lines_.begin(), lines_.end(),
                           [&](const std::string& l) { return l.find(text) != std::string::npos; });
    }
    std::string all() const {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string out;
        for (const auto& l : lines_) out += l + "\n";
        return out;
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::string> lines_;
};

// A redis-server and the keys of one queue on it.
struct QueueBed {
    rowpump::testing::RedisServer server;
    rowpump::redis::Connection redis = server.connect();
    std::string queue = "sdk_test";
    rowpump::protocol::Keys keys = rowpump::protocol::keys_for(queue);
    LogLines log;

    void announce(const std::string& values = "status") {
        redis.command({"HSET", keys.meta, "values", values, "lease", "60s"});
    }
    void push_ready(const std::vector<std::string>& messages) {
        std::vector<std::string> args{"RPUSH", keys.ready};
        args.insert(args.end(), messages.begin(), messages.end());
        redis.command(args);
    }
    std::vector<std::string> list(const std::string& key) {
        return redis.command({"LRANGE", key, "0", "-1"}).strings();
    }
    // The done list as run() leaves it, each report's handler time (its last field, ms=, which
    // every report from run() carries) cut off.
    std::vector<std::string> reports_without_ms() {
        auto done = list(keys.done);
        for (auto& message : done) {
            const auto at = message.rfind(" ms=");
            REQUIRE(at != std::string::npos);
            REQUIRE(message.find_first_not_of("0123456789", at + 4) == std::string::npos);
            message.resize(at);
        }
        return done;
    }
    std::int64_t length(const std::string& key) { return redis.command({"LLEN", key}).integer(); }
    bool exists(const std::string& key) { return redis.command({"EXISTS", key}).integer() == 1; }
    bool listed(const std::string& worker_id) {
        return redis.command({"SISMEMBER", keys.workers, worker_id}).integer() == 1;
    }

    rowpump::WorkerOptions options(int threads = 1) {
        rowpump::WorkerOptions o;
        o.redis.port = server.port();
        o.queue = queue;
        o.threads = threads;
        o.heartbeat_ttl = 3s;
        o.fetch_timeout = 200ms;
        o.queue_wait = 2s;
        o.log = [this](const std::string& line) { log.add(line); };
        return o;
    }
};

// Whether a client is blocked in BLMOVE right now (CLIENT LIST: flags=b, cmd=blmove).
bool blocked_in_blmove(rowpump::redis::Connection& redis) {
    std::istringstream clients(redis.command({"CLIENT", "LIST"}).string());
    std::string line;
    while (std::getline(clients, line)) {
        if (line.find(" flags=b ") != std::string::npos &&
            line.find(" cmd=blmove ") != std::string::npos)
            return true;
    }
    return false;
}

// Calls of `command` since the last CONFIG RESETSTAT, from INFO commandstats.
std::int64_t command_calls(rowpump::redis::Connection& redis, const std::string& command) {
    const auto stats = redis.command({"INFO", "commandstats"}).string();
    const auto at = stats.find("cmdstat_" + command + ":calls=");
    return at == std::string::npos ? 0 : std::stoll(stats.substr(stats.find('=', at) + 1));
}

// worker.fetch(timeout) on a thread of its own, so the test can watch it wait.
class BackgroundFetch {
public:
    BackgroundFetch(rowpump::Worker& worker, std::chrono::milliseconds timeout)
        : thread_([this, &worker, timeout] {
              try {
                  task_ = worker.fetch(timeout);
              } catch (...) {
                  failure_ = std::current_exception();
              }
              returned_ = true;
          }) {}
    ~BackgroundFetch() {
        if (thread_.joinable()) thread_.join();
    }
    bool returned() const { return returned_.load(); }
    // Waits for fetch() to return (the timeout is a guard); rethrows what it threw.
    std::optional<Task> result(std::chrono::milliseconds timeout) {
        if (!eventually(timeout, [&] { return returned(); })) {
            throw std::runtime_error("fetch() did not return in time");
        }
        thread_.join();
        if (failure_) std::rethrow_exception(failure_);
        return task_;
    }

private:
    std::atomic<bool> returned_{false};
    std::optional<Task> task_;
    std::exception_ptr failure_;
    std::thread thread_;
};

Outcome status_ok(const Task& task) {
    return Outcome::success({{"status", std::to_string(std::stol(task.id) * 2)}});
}

// A latch a handler waits on until the test opens it.
class Gate {
public:
    void open() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            open_ = true;
        }
        cv_.notify_all();
    }
    void wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return open_; });
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool open_ = false;
};

}  // namespace

TEST_CASE("worker runs tasks, reports ok with values and signs off on stop", "[worker]") {
    QueueBed bed;
    bed.announce("status");
    bed.push_ready({ready_for(42), ready_for(7, 2), ready_for(1000)});

    rowpump::Worker worker(bed.options(2));
    RunningWorker running(worker, status_ok);
    REQUIRE(eventually(10s, [&] { return bed.length(bed.keys.done) == 3; }));

    // While it runs: listed, with a heartbeat that has a TTL and gets refreshed.
    auto heartbeat = bed.keys.heartbeat(worker.worker_id());
    CHECK(bed.listed(worker.worker_id()));
    auto ttl = bed.redis.command({"PTTL", heartbeat}).integer();
    CHECK(ttl > 0);
    CHECK(ttl <= 3000);
    CHECK(eventually(3s, [&] { return bed.redis.command({"PTTL", heartbeat}).integer() > ttl; }));

    running.stop_and_join();
    auto done = bed.reports_without_ms();
    std::sort(done.begin(), done.end());
    CHECK(done == std::vector<std::string>{"1000:0123456789ABCDEF-1-3E8 ok status=2000",
                                           "42:0123456789ABCDEF-1-2A ok status=84",
                                           "7:0123456789ABCDEF-2-7 ok status=14"});
    CHECK_FALSE(bed.exists(bed.keys.processing(worker.worker_id())));
    CHECK_FALSE(bed.exists(heartbeat));
    CHECK_FALSE(bed.listed(worker.worker_id()));
    CHECK(bed.length(bed.keys.ready) == 0);
}

TEST_CASE("with batch, a thread takes and reports several tasks per round trip, in order",
          "[worker]") {
    QueueBed bed;
    bed.announce();
    std::vector<std::string> all, expected;
    for (long id = 1; id <= 50; ++id) {
        all.push_back(ready_for(id));
        expected.push_back(ready_for(id) + " ok status=" + std::to_string(2 * id));
    }
    bed.push_ready(all);
    bed.redis.command({"CONFIG", "RESETSTAT"});

    auto options = bed.options(1);
    options.batch = 8;
    options.heartbeat_ttl = 60s;  // one beat (at the start) in this test
    rowpump::Worker worker(options);
    auto probe = bed.server.connect();  // the handler's own: bed.redis is the test thread's
    std::vector<std::int64_t> in_hand;  // the processing list's length as each handler starts
    RunningWorker running(worker, [&](const Task& task) {
        in_hand.push_back(
            probe.command({"LLEN", bed.keys.processing(worker.worker_id())}).integer());
        return status_ok(task);
    });
    REQUIRE(eventually(10s, [&] { return bed.length(bed.keys.done) == 50; }));
    running.stop_and_join();

    CHECK(bed.reports_without_ms() == expected);
    CHECK_FALSE(bed.exists(bed.keys.processing(worker.worker_id())));
    // The first beat is the beat script. The first fetch is a BLMOVE (task 1). Every round
    // trip after it reports what was run and takes up to 8 (EVALSHA twice): after task 1,
    // after each of the six batches 2-9 ... 42-49, and after task 50, whose take finds
    // nothing; then the leave script at stop. One task at a time would be 52.
    const auto stats = bed.redis.command({"INFO", "commandstats"}).string();
    INFO(stats);
    CHECK(stats.find("cmdstat_evalsha:calls=18,") != std::string::npos);
    CHECK(stats.find("cmdstat_eval:") == std::string::npos);  // every script was loaded
    // Tasks taken together wait in the processing list until the batch is reported.
    REQUIRE(in_hand.size() == 50);
    CHECK(in_hand[0] == 1);
    CHECK(in_hand[1] == 8);
    CHECK(in_hand[8] == 8);
}

TEST_CASE("by default fast handlers take several tasks per round trip, slow ones one", "[worker]") {
    QueueBed bed;
    bed.announce();
    std::vector<std::string> fast, slow;
    for (long id = 1; id <= 300; ++id) fast.push_back(ready_for(id));
    for (long id = 301; id <= 400; ++id) slow.push_back(ready_for(id));
    rowpump::Worker worker(bed.options(1));  // batch 0: adaptive
    auto probe = bed.server.connect();       // the handler's own: bed.redis is the test thread's
    std::vector<std::int64_t> in_hand;       // the processing list's length as slow tasks start
    RunningWorker running(worker, [&](const Task& task) {
        if (std::stol(task.id) <= 300) return status_ok(task);
        in_hand.push_back(
            probe.command({"LLEN", bed.keys.processing(worker.worker_id())}).integer());
        std::this_thread::sleep_for(5ms);
        return status_ok(task);
    });
    REQUIRE(eventually(5s, [&] { return bed.listed(worker.worker_id()); }));

    // 300 no-op tasks. Each round trip carries a report (EVALSHA) and a take: the take
    // script (EVALSHA) or, for one task, BLMOVE. One task per round trip would be 600 calls.
    bed.redis.command({"CONFIG", "RESETSTAT"});
    bed.push_ready(fast);
    REQUIRE(eventually(20s, [&] { return bed.length(bed.keys.done) == 300; }));
    const auto stats = bed.redis.command({"INFO", "commandstats"}).string();
    const auto calls = [&](const std::string& command) {
        const auto at = stats.find("cmdstat_" + command + ":calls=");
        return at == std::string::npos ? 0 : std::stoll(stats.substr(stats.find('=', at) + 1));
    };
    INFO(stats);
    CHECK(calls("evalsha") + calls("blmove") <= 120);

    // 100 tasks of 5 ms each, after the list ran empty.
    bed.push_ready(slow);
    REQUIRE(eventually(20s, [&] { return bed.length(bed.keys.done) == 400; }));
    running.stop_and_join();
    REQUIRE(in_hand.size() == 100);
    // Nothing waits behind a slow handler: each slow task started with nothing else in hand.
    CHECK(std::all_of(in_hand.begin(), in_hand.end(), [](auto n) { return n == 1; }));
}

TEST_CASE("by default slow handlers hold one task per thread: another worker is not starved",
          "[worker]") {
    QueueBed bed;
    bed.announce();
    std::atomic<int> ran_first{0}, ran_second{0};
    auto slow = [](std::atomic<int>& ran) {
        return [&ran](const Task& task) {
            std::this_thread::sleep_for(10ms);
            ++ran;
            return status_ok(task);
        };
    };
    rowpump::Worker first(bed.options(2));  // batch 0: adaptive
    rowpump::Worker second(bed.options(2));
    RunningWorker running_first(first, slow(ran_first));
    RunningWorker running_second(second, slow(ran_second));
    REQUIRE(eventually(
        5s, [&] { return bed.listed(first.worker_id()) && bed.listed(second.worker_id()); }));
    std::vector<std::string> all;
    for (long id = 1; id <= 120; ++id) all.push_back(ready_for(id));
    bed.push_ready(all);

    std::int64_t most_in_hand = 0;
    REQUIRE(eventually(
        20s,
        [&] {
            for (const auto* w : {&first, &second}) {
                most_in_hand =
                    std::max(most_in_hand, bed.length(bed.keys.processing(w->worker_id())));
            }
            return bed.length(bed.keys.done) == 120;
        },
        1ms));
    running_first.stop_and_join();
    running_second.stop_and_join();

    INFO("most tasks in one worker's hand: " << most_in_hand << "; ran " << ran_first << " / "
                                             << ran_second);
    CHECK(most_in_hand <= 2);  // one per thread: none waits behind a running handler
    // Both workers ran about half (equal threads, equal handlers); a worker that took a batch
    // at once would leave the other idle while its own tasks waited.
    CHECK(ran_first >= 30);
    CHECK(ran_second >= 30);
}

TEST_CASE("reports survive a SCRIPT FLUSH (Redis restarted with its data)", "[worker]") {
    const int batch = GENERATE(1, 4);
    INFO("batch " << batch);
    QueueBed bed;
    bed.announce();
    bed.push_ready({ready_for(1)});
    auto options = bed.options();
    options.batch = batch;
    rowpump::Worker worker(options);
    RunningWorker running(worker, status_ok);
    REQUIRE(eventually(5s, [&] { return bed.length(bed.keys.done) == 1; }));

    bed.redis.command({"SCRIPT", "FLUSH"});
    bed.push_ready({ready_for(2), ready_for(3)});
    REQUIRE(eventually(5s, [&] { return bed.length(bed.keys.done) == 3; }));
    running.stop_and_join();
    CHECK(bed.reports_without_ms() == std::vector<std::string>{ready_for(1) + " ok status=2",
                                                               ready_for(2) + " ok status=4",
                                                               ready_for(3) + " ok status=6"});
    CHECK_FALSE(bed.exists(bed.keys.processing(worker.worker_id())));
}

TEST_CASE("worker hands the task id, token and attempt to the handler", "[worker]") {
    QueueBed bed;
    bed.announce("");
    bed.push_ready({"user%2F9:" + token_for(9, 3)});

    rowpump::Worker worker(bed.options());
    auto task = worker.fetch(2s);
    REQUIRE(task);
    CHECK(task->id == "user/9");
    CHECK(task->token == "0123456789ABCDEF-3-9");
    CHECK(task->attempt == 3);
    CHECK(task->message == "user%2F9:0123456789ABCDEF-3-9");
    CHECK(bed.list(bed.keys.processing(worker.worker_id())) ==
          std::vector<std::string>{task->message});
    CHECK(bed.exists(bed.keys.heartbeat(worker.worker_id())));

    REQUIRE(worker.complete(*task, Outcome::fail("no such user")));
    CHECK(bed.list(bed.keys.done) ==
          std::vector<std::string>{"user%2F9:0123456789ABCDEF-3-9 fail reason=no%20such%20user"});
    CHECK_FALSE(bed.exists(bed.keys.processing(worker.worker_id())));
}

TEST_CASE("fetch blocks until a task comes or the timeout passes", "[worker]") {
    QueueBed bed;
    bed.announce();
    rowpump::Worker worker(bed.options());

    SECTION("nothing comes: it waits out its timeout in BLMOVE and returns nothing") {
        const auto start = std::chrono::steady_clock::now();
        BackgroundFetch fetch(worker, 2s);
        REQUIRE(eventually(10s, [&] { return blocked_in_blmove(bed.redis) || fetch.returned(); }));
        CHECK_FALSE(fetch.returned());  // seen blocked in Redis before it returned
        CHECK_FALSE(fetch.result(30s));
        // It did not return before its timeout (a lower bound: a slow machine only adds).
        CHECK(std::chrono::steady_clock::now() - start >= 2s);
    }
    SECTION("a task comes while it waits: the fetch returns it") {
        BackgroundFetch fetch(worker, 60s);
        // The worker is blocked in Redis and its fetch has not returned: it waits.
        REQUIRE(eventually(10s, [&] { return blocked_in_blmove(bed.redis) || fetch.returned(); }));
        REQUIRE_FALSE(fetch.returned());
        bed.push_ready({ready_for(5)});
        const auto task = fetch.result(30s);  // a guard; the timeout (60 s) is far off
        REQUIRE(task);
        CHECK(task->id == "5");
        CHECK(bed.list(bed.keys.processing(worker.worker_id())) ==
              std::vector<std::string>{ready_for(5)});
    }
}

TEST_CASE("retry and extend reports carry their fields", "[worker]") {
    QueueBed bed;
    bed.announce();
    bed.push_ready({ready_for(1), ready_for(2)});
    rowpump::Worker worker(bed.options());

    auto first = worker.fetch(2s);
    auto second = worker.fetch(2s);
    REQUIRE(first);
    REQUIRE(second);
    worker.extend(*first, 90s);
    CHECK(bed.list(bed.keys.processing(worker.worker_id())).size() == 2);  // still in hand
    CHECK(worker.complete(*first, Outcome::retry("upstream busy", 1500ms)));
    CHECK(worker.complete(*second, Outcome::retry("")));
    CHECK(
        bed.list(bed.keys.done) ==
        std::vector<std::string>{"1:0123456789ABCDEF-1-1 extend lease=90s",
                                 "1:0123456789ABCDEF-1-1 retry reason=upstream%20busy delay=1500ms",
                                 "2:0123456789ABCDEF-1-2 retry"});
    CHECK_THROWS_AS(worker.extend(*second, 0ms), rowpump::Error);
}

TEST_CASE("complete returns false once the dispatcher has taken the task back", "[worker]") {
    QueueBed bed;
    bed.announce();
    bed.push_ready({ready_for(11)});
    auto options = bed.options();
    options.heartbeat_ttl = 60s;  // no beat of its own during the test
    rowpump::Worker worker(options);

    auto task = worker.fetch(2s);
    REQUIRE(task);
    // The dispatcher's view: the heartbeat lapsed, so it reaps the worker.
    auto processing = bed.keys.processing(worker.worker_id());
    auto heartbeat = bed.keys.heartbeat(worker.worker_id());
    bed.redis.command({"DEL", heartbeat});
    auto taken = bed.redis
                     .command({"EVAL", std::string(rowpump::protocol::kReapScript.text()), "3",
                               heartbeat, processing, bed.keys.workers, worker.worker_id()})
                     .strings();
    REQUIRE(taken == std::vector<std::string>{ready_for(11)});

    CHECK_FALSE(worker.complete(*task, Outcome::success({{"status", "1"}})));
    CHECK(bed.length(bed.keys.done) == 0);
}

TEST_CASE("a worker wrongly reaped lists itself again with its next heartbeat", "[worker]") {
    QueueBed bed;
    bed.announce();
    auto options = bed.options();
    options.heartbeat_ttl = 600ms;
    rowpump::Worker worker(options);
    RunningWorker running(worker, status_ok);
    REQUIRE(eventually(5s, [&] { return bed.listed(worker.worker_id()); }));

    bed.redis.command({"SREM", bed.keys.workers, worker.worker_id()});
    CHECK(eventually(3s, [&] { return bed.listed(worker.worker_id()); }));
    running.stop_and_join();
    CHECK_FALSE(bed.listed(worker.worker_id()));
}

TEST_CASE("a value the queue does not declare is refused", "[worker]") {
    QueueBed bed;
    bed.announce("status,checked_at");

    SECTION("complete() throws, naming the value and the declared ones") {
        bed.push_ready({ready_for(3)});
        rowpump::Worker worker(bed.options());
        auto task = worker.fetch(2s);
        REQUIRE(task);
        try {
            worker.complete(*task, Outcome::success({{"status", "1"}, {"colour", "red"}}));
            FAIL("complete() accepted an undeclared value");
        } catch (const rowpump::Error& e) {
            std::string what = e.what();
            CHECK(what.find("'colour'") != std::string::npos);
            CHECK(what.find("status, checked_at") != std::string::npos);
        }
        CHECK(bed.length(bed.keys.done) == 0);
        // Nothing lost: the task is still in hand and can be reported properly.
        CHECK(worker.complete(*task, Outcome::success({{"status", "1"}, {"checked_at", "now"}})));
        CHECK(bed.list(bed.keys.done) ==
              std::vector<std::string>{ready_for(3) + " ok checked_at=now status=1"});
    }

    SECTION("run() reports a retry naming the problem") {
        bed.push_ready({ready_for(4)});
        rowpump::Worker worker(bed.options());
        RunningWorker running(worker, [](const Task&) {
            return Outcome::success({{"colour", "red"}});
        });
        REQUIRE(eventually(5s, [&] { return bed.length(bed.keys.done) == 1; }));
        running.stop_and_join();
        std::string error;
        auto done = rowpump::protocol::parse_done(bed.list(bed.keys.done).at(0), error);
        REQUIRE(done);
        CHECK(done->verb == rowpump::Verb::retry);
        CHECK(done->task.message == ready_for(4));
        CHECK(done->reason.find("'colour'") != std::string::npos);
        CHECK(done->reason.find("status, checked_at") != std::string::npos);
    }

    SECTION("a value on_success needs and the outcome leaves out is refused too") {
        bed.push_ready({ready_for(5), ready_for(6)});
        rowpump::Worker worker(bed.options());
        auto task = worker.fetch(2s);
        REQUIRE(task);
        CHECK_THROWS_WITH(worker.complete(*task, Outcome::success({{"status", "1"}})),
                          Catch::Contains("'checked_at' is missing"));
        CHECK(bed.length(bed.keys.done) == 0);
        CHECK(worker.complete(*task, Outcome::retry("later")));

        RunningWorker running(worker, [](const Task&) {
            return Outcome::success({{"status", "1"}});
        });
        REQUIRE(eventually(5s, [&] { return bed.length(bed.keys.done) == 2; }));
        running.stop_and_join();
        std::string error;
        auto done = rowpump::protocol::parse_done(bed.list(bed.keys.done).at(1), error);
        REQUIRE(done);
        CHECK(done->task.message == ready_for(6));
        CHECK(done->verb == rowpump::Verb::retry);
        CHECK(done->reason.find("'checked_at' is missing") != std::string::npos);
    }
}

TEST_CASE("an exception from the handler is reported as a retry with its message", "[worker]") {
    QueueBed bed;
    bed.announce();
    bed.push_ready({ready_for(8)});
    rowpump::Worker worker(bed.options());
    RunningWorker running(
        worker, [](const Task&) -> Outcome { throw std::runtime_error("boom: db down"); });
    REQUIRE(eventually(5s, [&] { return bed.length(bed.keys.done) == 1; }));
    running.stop_and_join();
    CHECK(bed.reports_without_ms() ==
          std::vector<std::string>{ready_for(8) + " retry reason=boom%3A%20db%20down"});
}

TEST_CASE("a dispatcher of another protocol version: the worker refuses and takes nothing",
          "[worker][protocol]") {
    QueueBed bed;
    bed.announce();
    bed.redis.command({"HSET", bed.keys.meta, "protocol", "999"});
    const std::vector<std::string> ready{ready_for(1), ready_for(2)};
    bed.push_ready(ready);
    const std::string expected =
        "queue 'sdk_test': the dispatcher speaks protocol version 999, this worker protocol "
        "version 1; run a worker and a dispatcher of the same protocol version "
        "(docs/upgrading.md); no task was taken";
    rowpump::Worker worker(bed.options());

    SECTION("fetch") {
        CHECK_THROWS_WITH(worker.fetch(1s), expected);
    }
    SECTION("run") {
        CHECK_THROWS_WITH(worker.run(status_ok), expected);
    }
    CHECK(bed.list(bed.keys.ready) == ready);
    CHECK_FALSE(bed.exists(bed.keys.processing(worker.worker_id())));
    CHECK_FALSE(bed.exists(bed.keys.heartbeat(worker.worker_id())));
    CHECK_FALSE(bed.listed(worker.worker_id()));
}

TEST_CASE("a dispatcher of the worker's protocol version, or of none, is served",
          "[worker][protocol]") {
    QueueBed bed;
    bed.announce();  // no protocol field: a dispatcher from before it, version 1
    SECTION("version 1") {
        bed.redis.command({"HSET", bed.keys.meta, "protocol", "1"});
    }
    SECTION("no version") {}
    bed.push_ready({ready_for(3)});
    rowpump::Worker worker(bed.options());
    const auto task = worker.fetch(5s);
    REQUIRE(task);
    CHECK(task->id == "3");
    CHECK(rowpump::protocol_version() == 1);
}

TEST_CASE("an unknown queue is an error after queue_wait", "[worker]") {
    QueueBed bed;  // nothing announced
    auto options = bed.options();
    options.queue_wait = 300ms;
    const std::string expected =
        "unknown queue 'sdk_test': no dispatcher has announced it (key rowpump:{sdk_test}:meta is "
        "missing)";

    SECTION("fetch") {
        rowpump::Worker worker(options);
        auto start = std::chrono::steady_clock::now();
        CHECK_THROWS_WITH(worker.fetch(1s), expected);
        CHECK(std::chrono::steady_clock::now() - start >= 300ms);
    }
    SECTION("run") {
        rowpump::Worker worker(options);
        CHECK_THROWS_WITH(worker.run(status_ok), expected);
    }
    SECTION("announced while waiting") {
        options.queue_wait = 60s;
        rowpump::Worker worker(options);
        bed.redis.command({"CONFIG", "RESETSTAT"});
        BackgroundFetch fetch(worker, 5s);
        // It looked for the queue's meta hash (EXISTS), found none, and waits: the fetch has
        // not returned, nor thrown.
        REQUIRE(eventually(10s, [&] { return command_calls(bed.redis, "exists") >= 2; }));
        REQUIRE_FALSE(fetch.returned());
        bed.redis.command({"HSET", bed.keys.meta, "values", "status"});
        bed.push_ready({ready_for(1)});
        const auto task = fetch.result(30s);  // a guard; queue_wait (60 s) is far off
        REQUIRE(task);
        CHECK(task->id == "1");
    }
}

TEST_CASE("a malformed ready message goes to the bad list and the worker carries on", "[worker]") {
    QueueBed bed;
    bed.announce();
    bed.push_ready({"no-token-here", "5:not-a-token", ready_for(6)});
    rowpump::Worker worker(bed.options());
    RunningWorker running(worker, status_ok);
    REQUIRE(eventually(5s, [&] { return bed.length(bed.keys.done) == 1; }));
    running.stop_and_join();

    CHECK(bed.reports_without_ms() == std::vector<std::string>{ready_for(6) + " ok status=12"});
    CHECK(bed.list(bed.keys.bad) == std::vector<std::string>{"no-token-here", "5:not-a-token"});
    CHECK(worker.bad_messages() == 2);
    CHECK(bed.log.contains("malformed ready message 'no-token-here'"));
    CHECK_FALSE(bed.exists(bed.keys.processing(worker.worker_id())));
}

TEST_CASE("stop() under load: every task fetched is reported, none is left in hand", "[worker]") {
    const int batch = GENERATE(1, 4);
    INFO("batch " << batch);
    QueueBed bed;
    bed.announce();
    std::vector<std::string> all;
    for (long id = 1; id <= 3000; ++id) all.push_back(ready_for(id));
    for (std::size_t i = 0; i < all.size(); i += 500) {
        bed.push_ready(std::vector<std::string>(all.begin() + static_cast<long>(i),
                                                all.begin() + static_cast<long>(i + 500)));
    }

    auto options = bed.options(8);
    options.batch = batch;
    rowpump::Worker worker(options);
    std::atomic<long> handled{0}, started_after_stop{0};
    RunningWorker running(worker, [&](const Task& task) {
        if (worker.stopping()) ++started_after_stop;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        // stop() from inside a handler, while the other threads are busy.
        if (++handled == 300) worker.stop();
        return status_ok(task);
    });
    REQUIRE(eventually(10s, [&] { return worker.stopping(); }));
    running.stop_and_join();

    CHECK_FALSE(bed.exists(bed.keys.processing(worker.worker_id())));
    auto done = bed.list(bed.keys.done);
    auto ready = bed.list(bed.keys.ready);
    CHECK(static_cast<long>(done.size()) == handled.load());
    // No fetch after stop(): a thread only runs what it holds, at most one batch.
    CHECK(started_after_stop.load() <= 8 * batch);
    CHECK(handled.load() < 3000);
    std::multiset<std::string> seen(ready.begin(), ready.end());
    for (const auto& message : done) {
        std::string error;
        auto parsed = rowpump::protocol::parse_done(message, error);
        REQUIRE(parsed);
        CHECK(parsed->verb == rowpump::Verb::success);
        seen.insert(parsed->task.message);
    }
    CHECK(seen == std::multiset<std::string>(all.begin(), all.end()));
}

TEST_CASE("worker rides out a Redis restart: the report waits, fetching resumes", "[worker]") {
    QueueBed bed;
    bed.announce();
    bed.push_ready({ready_for(21)});
    auto options = bed.options();
    options.heartbeat_ttl = 30s;  // the task must survive the restart in the processing list
    rowpump::Worker worker(options);
    Gate gate;
    std::atomic<bool> entered{false};
    RunningWorker running(worker, [&](const Task& task) {
        if (task.id == "21") {
            entered = true;
            gate.wait();
        }
        return status_ok(task);
    });
    REQUIRE(eventually(5s, [&] { return entered.load(); }));

    // Down with the task in hand; the snapshot keeps the lists for the restart.
    bed.redis.command({"SAVE"});
    bed.server.kill();
    gate.open();
    REQUIRE(eventually(10s, [&] { return bed.log.contains("report on task '21' failed"); }));
    bed.server.start();
    bed.redis = bed.server.connect();

    REQUIRE(eventually(10s, [&] { return bed.length(bed.keys.done) == 1; }));
    CHECK(bed.reports_without_ms() == std::vector<std::string>{ready_for(21) + " ok status=42"});
    bed.push_ready({ready_for(22)});
    CHECK(eventually(10s, [&] { return bed.length(bed.keys.done) == 2; }));
    CHECK(eventually(5s, [&] { return bed.exists(bed.keys.heartbeat(worker.worker_id())); }));
    running.stop_and_join();
    CHECK(bed.log.contains("redis unavailable"));
    CHECK(bed.log.contains("redis reachable again"));
    CHECK_FALSE(bed.exists(bed.keys.processing(worker.worker_id())));
}

TEST_CASE("worker authenticates with a password or an ACL user", "[worker]") {
    QueueBed bed;
    bed.announce();
    bed.redis.command({"CONFIG", "SET", "requirepass", "s3cret"});  // we stay logged in
    bed.redis.command({"ACL", "SETUSER", "app", "on", ">app-pw", "~*", "&*", "+@all"});
    auto options = bed.options();

    SECTION("password") {
        options.redis.password = "s3cret";
        rowpump::Worker worker(options);
        bed.push_ready({ready_for(1)});
        auto task = worker.fetch(2s);
        REQUIRE(task);
        CHECK(worker.complete(*task, Outcome::success({{"status", "1"}})));
    }
    SECTION("ACL user") {
        options.redis.user = "app";
        options.redis.password = "app-pw";
        rowpump::Worker worker(options);
        bed.push_ready({ready_for(2)});
        RunningWorker running(worker, status_ok);
        REQUIRE(eventually(5s, [&] { return bed.length(bed.keys.done) == 1; }));
        running.stop_and_join();
    }
    SECTION("a wrong password is fatal in run()") {
        options.redis.password = "wrong";
        rowpump::Worker worker(options);
        CHECK_THROWS_WITH(worker.run(status_ok), Catch::Contains("WRONGPASS"));
    }
}

TEST_CASE("worker options are checked in the constructor", "[worker]") {
    rowpump::WorkerOptions options;
    options.queue = "user_block_check";
    auto rejects = [&](auto change, const std::string& text) {
        auto copy = options;
        change(copy);
        try {
            rowpump::Worker worker(copy);
            FAIL("accepted: " + text);
        } catch (const rowpump::Error& e) {
            CHECK(std::string(e.what()).find(text) != std::string::npos);
        }
    };
    rejects([](auto& o) { o.queue = ""; }, "queue is required");
    rejects([](auto& o) { o.queue = "has space"; }, "queue 'has space'");
    rejects([](auto& o) { o.threads = 0; }, "threads");
    rejects([](auto& o) { o.heartbeat_ttl = 50ms; }, "heartbeat_ttl");
    rejects([](auto& o) { o.heartbeat_interval = o.heartbeat_ttl; }, "heartbeat_interval");
    rejects([](auto& o) { o.fetch_timeout = 0ms; }, "fetch_timeout");
    rejects([](auto& o) { o.batch = -1; },
            "batch must be 0 (adaptive) or between 1 and 1000, not -1");
    rejects([](auto& o) { o.batch = 1001; },
            "batch must be 0 (adaptive) or between 1 and 1000, not 1001");
    rejects([](auto& o) { o.worker_id = "a:b"; }, "worker_id");
    rejects([](auto& o) { o.redis.port = 0; }, "redis.port");

    rowpump::Worker worker(options);
    CHECK(rowpump::protocol::is_valid_name(worker.worker_id()));
    // <host>-<pid>-<6 hex digits>
    const std::string id = worker.worker_id();
    const auto last = id.rfind('-'), middle = id.rfind('-', last - 1);
    REQUIRE(middle != std::string::npos);
    CHECK(middle > 0);
    CHECK(id.substr(middle + 1, last - middle - 1) == std::to_string(::getpid()));
    CHECK(id.size() - last - 1 == 6);
    CHECK(id.find_first_not_of("0123456789abcdef", last + 1) == std::string::npos);
}
