// What the SDKs report beside their outcomes, as operators see it: a C++ and a Python worker
// whose handlers sleep a known time drain a queue; /metrics has one handler duration per task
// (ms= in the done messages) in the buckets the sleep allows, one due-to-start latency per
// row measured from due_since, and the live workers; status --json and the table list both
// workers with their language, version and done count (from their heartbeat values).

#include <signal.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "http_system.hpp"
#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;
using nlohmann::json;

namespace {

std::string users(const std::string& name) {
    return name + "{queue=\"users\"}";
}

std::string bucket(const std::string& name, const std::string& le) {
    return name + "_bucket{queue=\"users\",le=\"" + le + "\"}";
}

ChildProcess python_worker(HttpSystem& sys, const std::string& id, int work_ms) {
    const std::string sdk = ROWPUMP_PYTHON_SDK;
    SpawnOptions options;
    options.stdout_path = sys.bed.dir.file(id + ".out");
    options.env = {{"PYTHONPATH", sdk}, {"PYTHONDONTWRITEBYTECODE", "1"}};
    return ChildProcess({ROWPUMP_PYTHON3, sdk + "/conformance_worker.py", "--redis-host",
                         "127.0.0.1", "--redis-port", std::to_string(sys.bed.redis.port()),
                         "--queue", "users", "--worker-id", id, "--value", "status=1", "--work-ms",
                         std::to_string(work_ms), "--heartbeat-ttl-ms", "3000"},
                        options);
}

}  // namespace

TEST_CASE("handler time, due-to-start and the workers view from C++ and Python workers",
          "[http][metrics]") {
    constexpr int kRows = 40;
    constexpr int kWorkMs = 60;
    HttpSystem sys(queue_with_latency(), kRows, fast_due_count());  // rows due for an hour
    sys.start();
    TestWorkerSpec spec;
    spec.worker_id = "cpp-1";
    spec.heartbeat_ttl = std::chrono::milliseconds(3000);
    spec.work = std::chrono::milliseconds(kWorkMs);
    TestWorkerProcess cpp(ROWPUMP_TEST_WORKER, sys.bed.redis.port(), sys.bed.dir, spec);
    auto python = python_worker(sys, "py-1", kWorkMs);

    REQUIRE(eventually(60s, [&] { return sys.metric("rowpump_completed_total") == kRows; }));
    auto m = sys.metrics();
    // Every report carried ms=: one observation per task, none below the sleep.
    CHECK(sample(m, users("rowpump_handler_seconds_count")) == kRows);
    CHECK(sample(m, bucket("rowpump_handler_seconds", "0.05")) == 0);
    CHECK(sample(m, bucket("rowpump_handler_seconds", "60")) == kRows);
    CHECK(sample(m, users("rowpump_handler_seconds_sum")) >= kRows * kWorkMs / 1000.0);
    // Every row was due for an hour (due_since: updated_time) when it was pushed.
    CHECK(sample(m, users("rowpump_due_to_start_seconds_count")) == kRows);
    CHECK(sample(m, bucket("rowpump_due_to_start_seconds", "900")) == 0);
    CHECK(sample(m, bucket("rowpump_due_to_start_seconds", "+Inf")) == kRows);
    CHECK(sample(m, users("rowpump_due_to_start_seconds_sum")) >= kRows * 3600.0);

    // The heartbeats (every second) bring the done counts up to date.
    json workers;
    const bool listed = eventually(15s, [&] {
        auto r = rowpump_cli({"status", "-c", sys.config, "--json"});
        if (!r.status.success()) return false;
        auto o = json::parse(r.out);
        workers = o["worker_list"];
        std::int64_t done = 0;
        for (const auto& w : workers) done += w["done"].is_number() ? w["done"].get<int>() : 0;
        return o["live_workers"] == 2 && done == kRows;
    });
    INFO(workers.dump());
    REQUIRE(listed);
    REQUIRE(workers.size() == 2);
    CHECK(workers[0]["id"] == "cpp-1");  // by id
    CHECK(workers[0]["lang"] == "cpp");
    CHECK(workers[1]["id"] == "py-1");
    CHECK(workers[1]["lang"] == "python");
    for (const auto& w : workers) {
        CHECK(w["version"] == ROWPUMP_PROJECT_VERSION);
        CHECK(w["in_hand"] == 0);
        CHECK(w["alive"] == true);
        CHECK(w["host"].get<std::string>() != "");
        CHECK(w["heartbeat_age_seconds"].get<double>() <= 3.0);
    }
    CHECK(sys.metric("rowpump_live_workers") == 2);
    auto table = rowpump_cli({"status", "-c", sys.config});
    INFO(table.describe());
    CHECK(contains(table.out, "  worker cpp-1 "));
    CHECK(contains(table.out, "  worker py-1 "));
    CHECK(contains(table.out, std::string(" python ") + ROWPUMP_PROJECT_VERSION + " "));

    python.signal(SIGTERM);
    cpp.process().signal(SIGTERM);
    CHECK(python.wait(15s));
    CHECK(cpp.process().wait(15s));
    // Signed off: no longer listed, and the gauge follows.
    CHECK(eventually(10s, [&] { return sys.metric("rowpump_live_workers") == 0; }));
}
