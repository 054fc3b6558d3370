// GET /metrics against what the test did, in a format promtool accepts; /healthz and /readyz.

#include <catch2/catch.hpp>

#include "http_system.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;

namespace {

std::string users(const std::string& name) {
    return name + "{queue=\"users\"}";
}

// `promtool check metrics` (Debian's prometheus package) on a scrape; "" when it passes.
std::string promtool_problems(const TestBed& bed, const std::string& text) {
    const auto path = bed.dir.file("metrics.txt");
    write_file(path, text);
    const auto r = run_program({"sh", "-c", "promtool check metrics < '" + path + "' 2>&1"});
    return r.status.success() ? "" : r.describe();
}

}  // namespace

TEST_CASE("/metrics counts what happened, in valid Prometheus text", "[http][metrics]") {
    HttpSystem sys(queue_with_latency(), 100, fast_due_count());
    // Paused before the dispatcher starts: it must count the rows and claim none of them.
    auto paused = rowpump_cli({"pause", "-c", sys.config, "users"});
    INFO(paused.describe());
    REQUIRE(paused.status.success());
    sys.start();
    REQUIRE(eventually(10s, [&] { return sys.metric("rowpump_due_backlog") == 100; }));
    auto m = sys.metrics();
    CHECK(sample(m, users("rowpump_paused")) == 1);
    CHECK(sample(m, users("rowpump_leader")) == 1);
    CHECK(sample(m, users("rowpump_dispatched_total")) == 0);
    CHECK(sample(m, users("rowpump_oldest_due_age_seconds")) >= 3600);  // inserted 1 h ago
    CHECK(sample(m, users("rowpump_oldest_due_age_seconds")) < 3700);

    REQUIRE(rowpump_cli({"resume", "-c", sys.config, "users"}).status.success());
    REQUIRE(eventually(10s, [&] { return sys.metric("rowpump_dispatched_total") == 100; }));
    // A worker holding 3 tasks, with a live heartbeat.
    auto held = pop_ready(sys.redis, "users", 3);
    sys.redis.command({"SET", sys.keys().heartbeat("w1"), "1", "PX", "60000"});
    sys.redis.command({"RPUSH", sys.keys().processing("w1"), held[0], held[1], held[2]});
    sys.redis.command({"SADD", sys.keys().workers, "w1"});
    auto tasks = pop_ready(sys.redis, "users", 97);
    REQUIRE(tasks.size() == 97);
    std::vector<std::string> done;
    // Handlers that say they ran 250 ms (ms=), and one older worker that does not say.
    for (std::size_t i = 0; i < 91; ++i) done.push_back(tasks[i] + " ok status=1 ms=250");
    done.push_back(tasks[91] + " ok status=1");
    done.push_back(tasks[92] + " retry delay=1h");
    done.push_back(tasks[93] + " retry delay=1h");
    done.push_back(tasks[94] + " fail reason=gone");
    done.push_back(tasks[95] + " done");  // no such verb: malformed, moved to bad
    done.push_back("nonsense");           // malformed: bad
    push_done(sys.redis, "users", done);

    REQUIRE(eventually(10s, [&] { return sys.metric("rowpump_bad_total") == 2; }));
    REQUIRE(eventually(10s, [&] { return sys.metric("rowpump_workers") == 1; }));
    // Held: 3 by w1, 1 never reported (tasks[96]), 1 refused: all leased, none due.
    REQUIRE(eventually(10s, [&] { return sys.metric("rowpump_due_backlog") == 0; }));
    m = sys.metrics();
    CHECK(sample(m, users("rowpump_dispatched_total")) == 100);
    CHECK(sample(m, users("rowpump_completed_total")) == 92);
    CHECK(sample(m, users("rowpump_retried_total")) == 2);
    CHECK(sample(m, users("rowpump_dead_total")) == 1);
    CHECK(sample(m, users("rowpump_stale_total")) == 0);
    CHECK(sample(m, users("rowpump_reaped_total")) == 0);
    CHECK(sample(m, users("rowpump_paused")) == 0);
    CHECK(sample(m, users("rowpump_ready_length")) == 0);
    CHECK(sample(m, users("rowpump_in_flight")) == 3);
    CHECK(m.count(users("rowpump_oldest_due_age_seconds")) == 0);  // nothing due: no age
    CHECK(sample(m, users("rowpump_claims_total")) >= 1);
    CHECK(sample(m, users("rowpump_claim_duration_seconds_count")) ==
          sample(m, users("rowpump_claims_total")));
    CHECK(sample(m, "rowpump_claim_duration_seconds_bucket{queue=\"users\",le=\"+Inf\"}") ==
          sample(m, users("rowpump_claims_total")));
    CHECK(sample(m, users("rowpump_outcome_batch_duration_seconds_count")) >= 1);
    CHECK(sample(m, users("rowpump_handler_seconds_count")) == 91);
    CHECK(sample(m, users("rowpump_handler_seconds_sum")) == Approx(91 * 0.25));
    CHECK(sample(m, "rowpump_handler_seconds_bucket{queue=\"users\",le=\"0.1\"}") == 0);
    CHECK(sample(m, "rowpump_handler_seconds_bucket{queue=\"users\",le=\"0.25\"}") == 91);
    // Each of the 100 rows had been due (due_since) for over an hour when it was pushed.
    CHECK(sample(m, users("rowpump_due_to_start_seconds_count")) == 100);
    CHECK(sample(m, "rowpump_due_to_start_seconds_bucket{queue=\"users\",le=\"900\"}") == 0);
    CHECK(sample(m, users("rowpump_due_to_start_seconds_sum")) >= 100 * 3600.0);
    CHECK(sample(m, users("rowpump_live_workers")) == 1);
    CHECK(sample(m, "rowpump_connected{queue=\"users\",server=\"mysql\"}") == 1);
    CHECK(sample(m, "rowpump_connected{queue=\"users\",server=\"redis\"}") == 1);
    CHECK(sample(m, "rowpump_errors_total{queue=\"users\",kind=\"mysql\"}") == 0);
    CHECK(sample(m, "rowpump_build_info{version=\"" ROWPUMP_PROJECT_VERSION "\"}") == 1);
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 1") == 92);
    CHECK(promtool_problems(sys.bed, sys.get("/metrics").body) == "");
}

TEST_CASE("/healthz and /readyz follow the servers and the role", "[http]") {
    HttpSystem sys(e2e_queue(), 10);
    sys.start();
    auto ready = sys.get("/readyz");
    CHECK(ready.status == 200);
    CHECK(ready.body == "queue users: leader\n");
    CHECK(sys.get("/healthz").status == 200);

    // A second dispatcher on another port stands by, and is ready as such.
    const int standby_port = free_port();
    ConfigSpec spec = sys.bed.config_spec({sys.queue});
    spec.extra_lines = {"http: { listen: \"" + std::to_string(standby_port) + "\" }"};
    auto standby = sys.bed.start_dispatcher(write_config(sys.bed.dir.file("standby.yaml"), spec),
                                            "standby.log");
    CHECK(eventually(
        10s, [&] { return http_get(standby_port, "/readyz").body == "queue users: standby\n"; }));
    CHECK(http_get(standby_port, "/readyz").status == 200);

    sys.bed.redis.stop();
    CHECK(eventually(10s, [&] { return sys.get("/readyz").status == 503; }));
    CHECK(contains(sys.get("/readyz").body, "not connected to Redis"));
    CHECK(sys.get("/healthz").status == 200);  // alive, only not ready
    CHECK(sample(sys.metrics(),
                 "rowpump_errors_total{queue=\"users\",kind=\"redis_connection\"}") >= 1);
    sys.bed.redis.start();
    CHECK(eventually(15s, [&] { return sys.get("/readyz").status == 200; }));
}
