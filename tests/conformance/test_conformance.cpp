// The conformance suite: the protocol's behaviour, written once, run against every SDK's
// conformance worker (sdk_worker.hpp) with a real dispatcher, MariaDB and Redis. Each
// TEST_CASE is one scenario on servers of its own; ctest runs it once per SDK
// ("conformance: <scenario> [<sdk>]"). Outcomes are read from the rows: `runs` counts how
// often on_success was applied, so "done once" is a fact of the data.

#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/redis_sentinel.hpp"
#include "rowpump/testing/reply_cut_proxy.hpp"
#include "rowpump/testing/rowpump_cli.hpp"
#include "sdk_worker.hpp"

using namespace rowpump::testing;

namespace {

const std::vector<std::string> kStatus1 = {"--value", "status=1"};

std::vector<std::string> with(std::vector<std::string> flags,
                              const std::vector<std::string>& more) {
    flags.insert(flags.end(), more.begin(), more.end());
    return flags;
}

// The SDK this run of a scenario is about: one per GENERATE value.
const Sdk& current_sdk() {
    const auto index = GENERATE(range(std::size_t{0}, selected_sdks().size()));
    return selected_sdks()[index];
}

// A scenario's system: the dispatcher on queue "users" (one-shot: due while status = 0),
// and the conformance workers it starts.
struct Scenario {
    Scenario(const Sdk& sdk, std::int64_t rows, const QueueSpec& queue = scenario_queue())
        : sdk(sdk), sys(queue, rows) {}

    static QueueSpec scenario_queue() {
        QueueSpec queue = e2e_queue();
        queue.batch = 50;
        queue.lease = "5m";  // a task a worker lost would hold its row past every wait here
        queue.on_dead = "status = 3";
        queue.extra_lines = {"retry: { base: 100ms, cap: 1s, max_attempts: 20, max_delay: 5m }"};
        return queue;
    }

    std::unique_ptr<SdkWorker> worker(const std::string& id, std::vector<std::string> flags) {
        return worker_on(sys.bed.redis.port(), id, std::move(flags));
    }
    std::unique_ptr<SdkWorker> worker_on(int port, const std::string& id,
                                         std::vector<std::string> flags,
                                         const std::string& files = "") {
        return std::make_unique<SdkWorker>(sdk, sys.bed.dir, redis_flags(port), id,
                                           std::move(flags), "users", files);
    }
    // Another process under the worker id `id`, its task log and output named `files`.
    std::unique_ptr<SdkWorker> process_of(const std::string& id, const std::string& files,
                                          std::vector<std::string> flags) {
        return worker_on(sys.bed.redis.port(), id, std::move(flags), files);
    }

    std::string row(const std::string& column, std::int64_t id) {
        return sys.db
            .scalar_string("SELECT " + column +
                           " FROM user_block_status WHERE user_id = " + std::to_string(id))
            .value_or("NULL");
    }
    std::int64_t count(const std::string& where) {
        return sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE " + where);
    }
    std::int64_t in_hand(const SdkWorker& w) {
        return list_length(sys.redis, sys.keys().processing(w.id()));
    }
    std::int64_t stat(const std::string& field) { return queue_stat(sys.redis, "users", field); }

    // The worker ends on its own (--max-tasks) or after SIGTERM: exit 0, nothing left behind
    // in Redis.
    void expect_clean_exit(SdkWorker& w) {
        auto status = w.process().wait(20s);
        INFO(w.id() << " output:\n" << w.output());
        REQUIRE(status);
        CHECK(status->describe() == "exit code 0");
        CHECK(in_hand(w) == 0);
        CHECK(sys.redis.command({"EXISTS", sys.keys().heartbeat(w.id())}).integer() == 0);
        CHECK(sys.redis.command({"SISMEMBER", sys.keys().workers, w.id()}).integer() == 0);
    }
    void stop(SdkWorker& w) {
        w.process().signal(SIGTERM);
        expect_clean_exit(w);
    }

    // Nothing set aside as malformed, nothing reported on a claim that was over.
    void expect_no_bad_or_stale() {
        INFO(describe_stats(sys.redis, "users"));
        CHECK(stat("bad") == 0);
        CHECK(stat("stale") == 0);
        CHECK(list_length(sys.redis, sys.keys().bad) == 0);
    }

    const Sdk& sdk;
    E2eSystem sys;
};

std::map<std::string, int> times_handled(const std::vector<LoggedTask>& tasks) {
    std::map<std::string, int> count;
    for (const auto& t : tasks) ++count[t.id];
    return count;
}

}  // namespace

TEST_CASE("every row once", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 300);
    // 4 threads, adaptive batch; then 2 threads taking 5 at a time (the take script).
    auto bulk = s.worker("bulk", with(kStatus1, {"--threads", "4", "--max-tasks", "200"}));
    s.expect_clean_exit(*bulk);
    auto rest = s.worker("rest", with(kStatus1, {"--threads", "2", "--batch", "5"}));
    const bool done = eventually(
        45s, [&] { return s.sys.rows_left() == 0; }, 50ms);
    INFO(s.sys.table_summary() << "\n" << rest->output());
    REQUIRE(done);
    REQUIRE(eventually(10s, [&] { return s.stat("completed") == 300; }));
    // Listed, with a live heartbeat, while it runs.
    CHECK(s.sys.redis.command({"SISMEMBER", s.sys.keys().workers, "rest"}).integer() == 1);
    s.stop(*rest);
    CHECK(s.sys.rows_not_run_once() == 0);
    auto handled = bulk->handled();
    CHECK(handled.size() >= 200);  // --max-tasks stops the worker; tasks in hand still finish
    const auto more = rest->handled();
    handled.insert(handled.end(), more.begin(), more.end());
    CHECK(handled.size() == 300);
    CHECK(times_handled(handled).size() == 300);
    CHECK(s.sys.rows_claimed() == 0);
    s.expect_no_bad_or_stale();
}

TEST_CASE("values and their validation errors", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 1);
    // A value the queue does not declare: a retry that names it, on_success not applied.
    {
        auto w = s.worker("undeclared",
                          {"--value", "status=2", "--value", "bogus=1", "--max-tasks", "1"});
        s.expect_clean_exit(*w);
        REQUIRE(eventually(10s, [&] { return s.row("rp_attempts", 1) == "1"; }));
        CHECK_THAT(s.row("rp_last_error", 1), Catch::Contains("undeclared value 'bogus'"));
    }
    // A value on_success uses, left out: a retry that names it.
    {
        auto w = s.worker("missing", {"--max-tasks", "1"});
        s.expect_clean_exit(*w);
        REQUIRE(eventually(10s, [&] { return s.row("rp_attempts", 1) == "2"; }));
        CHECK_THAT(s.row("rp_last_error", 1), Catch::Contains("value 'status' is missing"));
    }
    // Exactly the declared values: applied.
    {
        auto w = s.worker("exact", {"--value", "status=2", "--max-tasks", "1"});
        s.expect_clean_exit(*w);
        REQUIRE(eventually(10s, [&] { return s.row("runs", 1) == "1"; }));
        CHECK(s.row("status", 1) == "2");
        CHECK(w->handled().at(0).attempt == 3);
    }
    CHECK(s.row("runs", 1) == "1");
    s.expect_no_bad_or_stale();
}

TEST_CASE("retry with delay, and a handler that throws", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 1);
    // An exception: a retry whose reason is its message, due after the backoff.
    {
        auto w = s.worker("thrower", {"--fail-mode", "throw", "--max-tasks", "1"});
        s.expect_clean_exit(*w);
        REQUIRE(eventually(10s, [&] { return s.row("rp_attempts", 1) == "1"; }));
        CHECK(s.row("rp_last_error", 1) == "test worker: handler threw for 1");
    }
    // A retry asking for 60 s: not due before then (the backoff here is at most 1 s).
    {
        auto w = s.worker(
            "delayer", {"--fail-mode", "retry", "--retry-delay-ms", "60000", "--max-tasks", "1"});
        s.expect_clean_exit(*w);
        CHECK(w->handled().at(0).attempt == 2);
        REQUIRE(eventually(10s, [&] { return s.row("rp_attempts", 1) == "2"; }));
        CHECK(s.row("rp_last_error", 1) == "test worker: retry requested");
        INFO("rp_lease_until " << s.row("rp_lease_until", 1) << ", now "
                               << s.sys.db.scalar_string("SELECT NOW(3)").value_or("?"));
        CHECK(s.count("user_id = 1 AND rp_lease_until > NOW(3) + INTERVAL 50 SECOND AND "
                      "rp_lease_until < NOW(3) + INTERVAL 61 SECOND") == 1);
    }
    CHECK(s.row("runs", 1) == "0");
    s.expect_no_bad_or_stale();
}

TEST_CASE("fail makes the row dead", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 1);
    auto w = s.worker("failer", {"--fail-mode", "fail", "--max-tasks", "1"});
    s.expect_clean_exit(*w);
    REQUIRE(eventually(10s, [&] { return s.row("rp_dead_at", 1) != "NULL"; }));
    CHECK(s.row("status", 1) == "3");  // on_dead
    CHECK(s.row("runs", 1) == "0");
    CHECK(s.row("rp_last_error", 1) == "test worker: fail requested");
    CHECK(eventually(10s, [&] { return s.stat("dead") == 1; }));
    s.expect_no_bad_or_stale();
}

TEST_CASE("extend keeps the claim of a task in hand", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 1);
    // extend(task, 10m) before a 2 s task: the claim (lease 5m) then ends 10 minutes from
    // then while the task is still in hand, and the report is applied as usual.
    auto w = s.worker("extender", with(kStatus1, {"--extend-ms", "600000", "--work-ms", "2000",
                                                  "--max-tasks", "1"}));
    const bool extended = eventually(15s, [&] {
        return s.count(
                   "user_id = 1 AND status = 0 AND rp_lease_until > NOW(3) + INTERVAL 7 "
                   "MINUTE") == 1 &&
               s.in_hand(*w) == 1;
    });
    INFO("output:\n" << w->output());
    REQUIRE(extended);
    s.expect_clean_exit(*w);
    REQUIRE(eventually(10s, [&] { return s.row("runs", 1) == "1"; }));
    CHECK(s.row("rp_lease_until", 1) == "NULL");
    s.expect_no_bad_or_stale();
}

TEST_CASE("a killed worker's tasks are taken back and done once", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 20);
    auto killed =
        s.worker("killed", with(kStatus1, {"--work-ms", "60000", "--threads", "4", "--batch", "1",
                                           "--heartbeat-ttl-ms", "1000"}));
    REQUIRE(eventually(20s, [&] { return s.in_hand(*killed) == 4; }));
    const auto taken = parse_ready_all(list_all(s.sys.redis, s.sys.keys().processing("killed")));
    killed->process().kill();
    CHECK(killed->handled().empty());

    auto next = s.worker("next", with(kStatus1, {"--threads", "4"}));
    const bool done = eventually(
        30s, [&] { return s.sys.rows_left() == 0; }, 50ms);
    INFO(s.sys.table_summary() << "\n" << next->output());
    REQUIRE(done);
    CHECK(eventually(10s, [&] { return s.stat("reaped") >= 4; }));
    s.stop(*next);
    CHECK(s.sys.rows_not_run_once() == 0);
    // Each task the killed worker held ran once more, as its next attempt.
    const auto handled = next->handled();
    REQUIRE(taken.size() == 4);
    for (const auto& lost : taken) {
        INFO("task " << lost.id << " attempt " << lost.attempt << " held by the killed worker");
        CHECK(std::count_if(handled.begin(), handled.end(), [&](const LoggedTask& t) {
                  return t.id == lost.id && t.attempt == lost.attempt + 1;
              }) == 1);
    }
    s.expect_no_bad_or_stale();
}

TEST_CASE("a worker restarted under its own name within the heartbeat TTL gives back what it held",
          "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 20);
    // A fixed worker id (a StatefulSet pod name): the process is killed holding 4 tasks and
    // started again at once, while the old heartbeat (3 s) still lives. The new process waits
    // for it to lapse (it is not renewed), takes the worker id over and reports what the old
    // one held as retries: each runs once more, nothing stays stuck until the lease (5m).
    const std::vector<std::string> flags = {"--threads",          "4",   "--batch", "1",
                                            "--heartbeat-ttl-ms", "3000"};
    auto old =
        s.process_of("pod-0", "pod-0-old", with(kStatus1, with(flags, {"--work-ms", "60000"})));
    REQUIRE(eventually(20s, [&] { return s.in_hand(*old) == 4; }));
    const auto taken = parse_ready_all(list_all(s.sys.redis, s.sys.keys().processing("pod-0")));
    old->process().kill();
    REQUIRE(s.sys.redis.command({"EXISTS", s.sys.keys().heartbeat("pod-0")}).integer() == 1);

    auto restarted = s.process_of("pod-0", "pod-0-new", with(kStatus1, flags));
    const bool done = eventually(
        40s, [&] { return s.sys.rows_left() == 0; }, 50ms);
    INFO(s.sys.table_summary() << "\n" << restarted->output());
    REQUIRE(done);
    s.stop(*restarted);
    CHECK(old->handled().empty());
    CHECK(s.sys.rows_not_run_once() == 0);
    const auto handled = restarted->handled();
    CHECK(handled.size() == 20);
    for (const auto& [id, times] : times_handled(handled)) {
        INFO("task " << id);
        CHECK(times == 1);
    }
    REQUIRE(taken.size() == 4);
    for (const auto& lost : taken) {
        INFO("task " << lost.id << " attempt " << lost.attempt << " held by the killed process");
        CHECK(std::count_if(handled.begin(), handled.end(), [&](const LoggedTask& t) {
                  return t.id == lost.id && t.attempt == lost.attempt + 1;
              }) == 1);
    }
    s.expect_no_bad_or_stale();
}

TEST_CASE("a second live process under one worker id is refused, and runs nothing twice",
          "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 120);
    // Two processes given one worker id. The second must be refused with an error that names
    // the id; had it run, its clean stop would delete the shared heartbeat, and the first's
    // tasks in hand would be taken back (the reaper looks every second, the first beats every
    // 5 s) and run twice.
    const std::vector<std::string> flags = {
        "--threads", "4", "--batch", "1", "--work-ms", "1000", "--heartbeat-ttl-ms", "15000"};
    auto first = s.process_of("twin", "twin-1", with(kStatus1, flags));
    REQUIRE(eventually(20s, [&] { return s.in_hand(*first) == 4; }));
    auto second = s.process_of("twin", "twin-2", with(kStatus1, flags));
    auto refused = second->process().wait(8s);
    second->process().signal(SIGTERM);  // on code that lets it in: its clean stop
    if (!refused) refused = second->process().wait(20s);
    INFO("second output:\n" << second->output());
    REQUIRE(refused);
    CHECK(refused->describe() == "exit code 1");
    CHECK(second->output().find("worker id 'twin' is in use by another live process") !=
          std::string::npos);
    CHECK(second->handled().empty());

    const bool done = eventually(
        60s, [&] { return s.sys.rows_left() == 0; }, 50ms);
    INFO(s.sys.table_summary() << "\n" << first->output());
    REQUIRE(done);
    s.stop(*first);
    auto handled = first->handled();
    const auto more = second->handled();
    handled.insert(handled.end(), more.begin(), more.end());
    CHECK(handled.size() == 120);
    for (const auto& [id, times] : times_handled(handled)) {
        INFO("task " << id);
        CHECK(times == 1);
    }
    CHECK(s.sys.rows_not_run_once() == 0);
    CHECK(s.stat("reaped") == 0);
    s.expect_no_bad_or_stale();
}

TEST_CASE("a worker built before fork runs in one child and is refused in the other",
          "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    if (sdk.name == "node") {
        WARN("Node.js has no fork() of a running process: each process builds its own Worker");
        return;
    }
    Scenario s(sdk, 12);
    // The worker is built, then the process forks twice (a pre-forking server): both children
    // hold the same worker, so the same worker id. Each process picks an incarnation of its
    // own when it starts serving; the child that comes second is refused.
    auto parent =
        s.worker("forked", with(kStatus1, {"--fork", "2", "--threads", "4", "--batch", "1",
                                           "--work-ms", "1000", "--heartbeat-ttl-ms", "3000"}));
    const bool refused =
        eventually(20s, [&] { return parent->output().find(" exit 1\n") != std::string::npos; });
    const bool done = eventually(
        40s, [&] { return s.sys.rows_left() == 0; }, 50ms);
    parent->process().signal(SIGTERM);
    s.expect_clean_exit(*parent);
    const auto output = parent->output();
    INFO(s.sys.table_summary() << "\noutput:\n" << output);
    CHECK(refused);
    REQUIRE(done);
    CHECK(output.find("worker id 'forked' is in use by another live process") != std::string::npos);
    CHECK(output.find(" exit 0\n") != std::string::npos);
    const auto handled = parent->handled();
    CHECK(handled.size() == 12);
    for (const auto& [id, times] : times_handled(handled)) {
        INFO("task " << id);
        CHECK(times == 1);
    }
    CHECK(s.sys.rows_not_run_once() == 0);
    CHECK(s.stat("reaped") == 0);
    s.expect_no_bad_or_stale();
}

TEST_CASE("a cut fetch reply gives back the tasks it moved", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 0);
    // The proxy passes everything but the first reply that carries row 5005's ready message,
    // and closes that connection: Redis moved the task all the same. The worker sees that
    // none of its threads holds the task and gives it back; it runs once (the lease, 5m,
    // would come far too late).
    ReplyCutProxy proxy(s.sys.bed.redis.port(), "\r\n5005:");
    auto cut = s.worker_on(proxy.port(), "cut", with(kStatus1, {"--threads", "2", "--batch", "1"}));
    REQUIRE(eventually(10s, [&] {
        return s.sys.redis.command({"EXISTS", s.sys.keys().heartbeat("cut")}).integer() == 1;
    }));
    insert_e2e_rows(s.sys.db, 5005, 1);
    REQUIRE(eventually(10s, [&] { return proxy.cut(); }));
    const bool done = eventually(20s, [&] { return s.row("runs", 5005) == "1"; });
    INFO("output:\n" << cut->output());
    REQUIRE(done);
    const auto handled = cut->handled();
    REQUIRE(handled.size() == 1);
    CHECK(handled[0].id == "5005");
    CHECK(handled[0].attempt == 1);  // given back, not taken back by the dispatcher
    CHECK(cut->output().find("whose reply was lost") != std::string::npos);
    s.stop(*cut);
    s.expect_no_bad_or_stale();
}

TEST_CASE("a heartbeat lapse refuses the late report", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 1);
    // The worker freezes (SIGSTOP) with the task in hand; its heartbeat (1 s) lapses and the
    // dispatcher takes the task back; another worker does it. Thawed, the first worker
    // finishes the task, and its report is refused: the row's outcome is applied once, and
    // the dispatcher never even sees the late report.
    auto frozen = s.worker("frozen", with(kStatus1, {"--work-ms", "3000", "--heartbeat-ttl-ms",
                                                     "1000", "--max-tasks", "1"}));
    REQUIRE(eventually(20s, [&] { return s.in_hand(*frozen) == 1; }));
    frozen->process().signal(SIGSTOP);
    REQUIRE(eventually(20s, [&] { return s.stat("reaped") == 1; }));
    auto other = s.worker("other", with(kStatus1, {"--max-tasks", "1"}));
    s.expect_clean_exit(*other);
    REQUIRE(eventually(10s, [&] { return s.row("runs", 1) == "1"; }));
    CHECK(other->handled().at(0).attempt == 2);

    frozen->process().signal(SIGCONT);
    s.expect_clean_exit(*frozen);
    REQUIRE(frozen->handled().size() == 1);
    CHECK(frozen->handled()[0].attempt == 1);
    CHECK(frozen->output().find("came too late") != std::string::npos);
    CHECK(s.row("runs", 1) == "1");
    CHECK(s.stat("completed") == 1);
    s.expect_no_bad_or_stale();
}

TEST_CASE("ready message fields reach the handler as sent", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 0);
    // Fields as any dispatcher might send them (the queue's payload: columns are the scenario
    // "payload fields"): the queue is paused and the test pushes ready messages with fields
    // itself, for rows that do not exist. A field with a percent-encoded value, an empty one,
    // a NULL (bare name), an unknown name.
    REQUIRE(rowpump_cli({"pause", "-c", s.sys.config, "users"}).status.success());
    const std::string token = "0123456789ABCDEF-1-2A";
    const std::vector<std::string> fields = {"url=http%3A%2F%2Fexample.org%2Fa%20b",
                                             "owner=", "note", "x_unknown=%C3%A9"};
    std::string message = "a%20b%3A9:" + token;
    for (const auto& f : fields) message += " " + f;
    s.sys.redis.command({"RPUSH", s.sys.keys().ready, message});

    auto w = s.worker("fields", with(kStatus1, {"--max-tasks", "1"}));
    s.expect_clean_exit(*w);
    const auto handled = w->handled();
    REQUIRE(handled.size() == 1);
    CHECK(handled[0].id == "a%20b%3A9");
    CHECK(handled[0].token == token);
    CHECK(handled[0].attempt == 1);
    CHECK(std::multiset<std::string>(handled[0].fields.begin(), handled[0].fields.end()) ==
          std::multiset<std::string>(fields.begin(), fields.end()));
    // Its done message names the task by id and token: the dispatcher reads it (and finds
    // no such claim) instead of setting it aside as malformed.
    const bool read = eventually(10s, [&] { return s.stat("stale") + s.stat("bad") >= 1; });
    INFO(describe_stats(s.sys.redis, "users") << "\n" << s.sys.dispatcher->log_tail());
    REQUIRE(read);
    CHECK(s.stat("bad") == 0);
    CHECK(list_length(s.sys.redis, s.sys.keys().bad) == 0);

    // A task's own deadline from its timeout_ms field: the one thread's hung handler is cut
    // off and the thread takes the next task.
    for (const char* id : {"t1", "t2"}) {
        s.sys.redis.command(
            {"RPUSH", s.sys.keys().ready, std::string(id) + ":" + token + " timeout_ms=200"});
    }
    auto hang = s.worker("per-task", {"--fail-mode", "hang", "--threads", "1", "--batch", "1"});
    const bool both = eventually(20s, [&] { return hang->handled().size() == 2; });
    INFO("output:\n" << hang->output());
    REQUIRE(both);
    s.stop(*hang);
}

TEST_CASE("a dispatcher of another protocol version is refused and nothing is taken",
          "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 5);
    REQUIRE(eventually(20s, [&] { return list_length(s.sys.redis, s.sys.keys().ready) == 5; }));
    // The dispatcher announced the queue once, at its start: this field stays.
    s.sys.redis.command({"HSET", s.sys.keys().meta, "protocol", "999"});
    const auto ready = s.sys.redis.command({"LRANGE", s.sys.keys().ready, "0", "-1"});

    auto w = s.worker("other-version", kStatus1);
    auto status = w->process().wait(30s);
    INFO("output:\n" << w->output());
    REQUIRE(status);
    CHECK(status->describe() == "exit code 1");
    CHECK(w->output().find("the dispatcher speaks protocol version 999, this worker protocol "
                           "version 1") != std::string::npos);
    CHECK(w->handled().empty());
    CHECK(s.sys.redis.command({"LRANGE", s.sys.keys().ready, "0", "-1"}).strings() ==
          ready.strings());
    CHECK(s.in_hand(*w) == 0);
    CHECK(s.sys.redis.command({"EXISTS", s.sys.keys().heartbeat(w->id())}).integer() == 0);
}

TEST_CASE("a handler past its deadline is reported as a timeout", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 1);
    // A handler that never returns: past its deadline the task is reported as a retry with
    // reason "timeout", and the one thread is free to take the row's next attempt.
    auto hang = s.worker("hang", {"--fail-mode", "hang", "--timeout-ms", "300", "--threads", "1"});
    const bool again = eventually(20s, [&] { return hang->handled().size() >= 2; });
    INFO("output:\n" << hang->output());
    REQUIRE(again);
    const auto handled = hang->handled();
    CHECK(handled[0].id == "1");
    CHECK(handled[0].attempt == 1);
    CHECK(handled[1].id == "1");
    CHECK(handled[1].attempt == 2);
    CHECK(s.row("rp_last_error", 1) == "timeout");
    // SIGTERM with a hung handler in hand: its deadline ends it, then the worker.
    s.stop(*hang);
    CHECK(s.row("runs", 1) == "0");
    s.expect_no_bad_or_stale();
}

TEST_CASE("graceful stop finishes the tasks in hand", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    Scenario s(sdk, 12);
    auto w =
        s.worker("drain", with(kStatus1, {"--work-ms", "500", "--threads", "4", "--batch", "1"}));
    REQUIRE(eventually(20s, [&] { return s.in_hand(*w) == 4; }));
    s.stop(*w);
    const auto handled = w->handled();
    REQUIRE(!handled.empty());
    for (const auto& t : handled) {
        INFO("task " << t.id);
        CHECK(eventually(10s, [&] { return s.row("runs", std::stoll(t.id)) == "1"; }));
    }
    // The others wait in the ready list for the next worker.
    const auto rest = 12 - static_cast<std::int64_t>(handled.size());
    CHECK(s.count("status = 0") == rest);
    CHECK(list_length(s.sys.redis, s.sys.keys().ready) == rest);
    s.expect_no_bad_or_stale();
}

TEST_CASE("Sentinel failover: every row once", "[conformance]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    SentinelGroup group;
    const rowpump::RedisAddress address = group.address();
    TempDir dir("rowpump-conformance-");
    MariaDb mysql;
    const std::string database = mysql.create_database();
    MysqlClient db = mysql.connect(database);
    create_e2e_table(db);
    constexpr std::int64_t kRows = 1000;
    insert_e2e_rows(db, 1, kRows);
    QueueSpec queue = e2e_queue();
    queue.lease = "4s";  // a ready message lost in the failover comes back this soon
    queue.batch = 100;
    ConfigSpec spec;
    spec.mysql_port = mysql.port();
    spec.database = database;
    spec.user = MariaDb::kUser;
    spec.password = MariaDb::kPassword;
    spec.queues = {queue};
    spec.redis_lines = redis_lines_for(address);
    const std::string config = write_config(dir.file("rowpump.yaml"), spec);
    migrate_apply(config);
    Dispatcher dispatcher(config, dir.file("dispatcher.log"));

    std::vector<std::string> sentinel;
    for (const auto& s : address.sentinels) {
        sentinel.insert(sentinel.end(), {"--sentinel", s.host + ":" + std::to_string(s.port)});
    }
    sentinel.insert(sentinel.end(), {"--sentinel-master", address.master});
    // 4 threads at 40 ms a task: rows flow for about 10 s.
    SdkWorker worker(
        sdk, dir, sentinel, "sentinel",
        with(kStatus1, {"--threads", "4", "--work-ms", "40", "--heartbeat-ttl-ms", "3000",
                        "--fetch-timeout-ms", "300", "--queue-wait-ms", "20000"}));
    auto applied = [&] {
        return db.scalar("SELECT COUNT(*) FROM user_block_status WHERE runs > 0");
    };
    REQUIRE(eventually(
        60s, [&] { return applied() >= 100; }, 50ms));
    REQUIRE(applied() < kRows);  // the failover starts while rows are flowing
    group.failover();
    // Rows due after the failover go through the new master.
    insert_e2e_rows(db, kRows + 1, 100);
    const bool done = eventually(
        90s,
        [&] {
            return db.scalar(
                       "SELECT COUNT(*) FROM user_block_status WHERE status = 0 OR "
                       "runs <> 1") == 0;
        },
        200ms);
    INFO(group.describe() << "\nworker:\n"
                          << file_tail(dir.file("sentinel.out"), 40) << "\ndispatcher:\n"
                          << dispatcher.log_tail(40));
    REQUIRE(done);
    worker.process().signal(SIGTERM);
    auto status = worker.process().wait(20s);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
    // Settled: nothing is applied twice later.
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status WHERE runs <> 1") == 0);
}
