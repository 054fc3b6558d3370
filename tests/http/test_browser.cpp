// The dashboard in a real browser: headless Chromium (Debian's) driven by
// tests/browser/dashboard.mjs loads the page of a dispatcher under load, sees the numbers
// move, retries a dead row and pauses the queue; this test checks the effects in MySQL and
// Redis. Needs node and `npm ci` in tests/browser (scripts/test.sh runs it).

#include <catch2/catch.hpp>

#include <filesystem>

#include "http_system.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;

TEST_CASE("the dashboard in Chromium shows live numbers, retries a dead row and pauses",
          "[browser]") {
    const std::string dir = ROWPUMP_SOURCE_DIR "/tests/browser";
    REQUIRE(std::filesystem::exists(dir + "/node_modules/playwright-core"));  // npm ci there
    REQUIRE(std::filesystem::exists("/usr/bin/chromium"));

    QueueSpec queue = e2e_queue();  // every row comes due again 2 s after its check
    queue.due = "updated_time < NOW(3) - INTERVAL 2 SECOND";
    queue.order_by = "updated_time";
    HttpSystem sys(queue, 3000);
    // Three dead rows, as `rowpump dead` would list them.
    sys.db.exec(
        "UPDATE user_block_status SET rp_dead_at = NOW(3), rp_attempts = 10, "
        "rp_last_error = 'upstream said 500' WHERE user_id IN (1, 2, 3)");
    sys.start();
    ConsumerOptions options;
    options.redis = sys.bed.redis.options();
    options.queue = "users";
    options.report_ok = true;
    options.ok_values = {{"status", "1"}};
    Consumer worker(options);
    // A worker as the SDKs list themselves, its host name carrying markup that must show as
    // text.
    const std::string worker_id = "w-browser";
    sys.redis.command({"SET", sys.keys().heartbeat(worker_id),
                       "host=%3Cb%3Eh1%3C%2Fb%3E;lang=cpp;version=0.1.0;done=1234;ttl=600000", "PX",
                       "600000"});
    sys.redis.command({"SADD", sys.keys().workers, worker_id});

    const auto shot = sys.bed.dir.file("dashboard.png");
    auto r =
        run_program({"node", dir + "/dashboard.mjs", "--url",
                     "http://127.0.0.1:" + std::to_string(sys.port) + "/", "--token",
                     HttpSystem::kToken, "--dead-id", "2", "--worker",
                     worker_id + ":<b>h1</b>:cpp:0.1.0:1,234", "--screenshot", shot, "--pause"},
                    90s);
    INFO(r.describe());
    REQUIRE(r.status.success());
    CHECK(std::filesystem::file_size(shot) > 10000);

    // Row 2 is no longer dead; rows 1 and 3 still are.
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE rp_dead_at IS NOT NULL "
                        "AND user_id IN (1, 2, 3)") == 2);
    CHECK(sys.db.scalar("SELECT rp_attempts FROM user_block_status WHERE user_id = 2") == 0);
    // Paused in Redis (the page showed "paused" before the script ended), and the dispatcher
    // stops dispatching. It sets the gauge in a cycle that saw the pause, after every earlier
    // cycle ended: from here on it may push nothing.
    CHECK(sys.redis.command({"EXISTS", sys.keys().paused}).integer() == 1);
    REQUIRE(eventually(10s, [&] { return sys.metric("rowpump_paused") == 1; }));
    const auto dispatched = queue_stat(sys.redis, "users", "dispatched");
    const auto completed = queue_stat(sys.redis, "users", "completed");
    // Tasks still ready or reported now were not counted yet: applying them shows that paused
    // cycles run (on a slow machine the worker may have drained everything already).
    const auto pending =
        list_length(sys.redis, sys.keys().ready) + list_length(sys.redis, sys.keys().done);
    // The worker drains what was pushed before the pause and the dispatcher applies it. The
    // cycle that applies the last of it finds the ready list empty and many rows due (each
    // row is due again 2 s after its check): unpaused, it would claim and push them.
    const auto pushed_since = [&] {
        return queue_stat(sys.redis, "users", "dispatched") - dispatched;
    };
    const bool drained = eventually(30s, [&] {
        return pushed_since() != 0 || (list_length(sys.redis, sys.keys().ready) == 0 &&
                                       list_length(sys.redis, sys.keys().done) == 0);
    });
    INFO(describe_stats(sys.redis, "users"));
    CHECK(pushed_since() == 0);
    REQUIRE(drained);
    if (pending > 0) REQUIRE(queue_stat(sys.redis, "users", "completed") > completed);
    const auto log = sys.dispatcher->log();
    CHECK(contains(log, "info http: queue users: retry ids 2: 1 dead row(s) due again"));
    CHECK(contains(log, "info http: queue users: paused (dashboard, from 127.0.0.1)"));
    worker.stop();
}

// group_by: a key whose text has quotes, a newline and a <script> shows in the Keys and the
// Per-key limits tables as that text; the script never runs.
TEST_CASE("the dashboard in Chromium shows a key's text as text, never markup", "[browser]") {
    const std::string dir = ROWPUMP_SOURCE_DIR "/tests/browser";
    REQUIRE(std::filesystem::exists(dir + "/node_modules/playwright-core"));  // npm ci there
    REQUIRE(std::filesystem::exists("/usr/bin/chromium"));
    const std::string key = "we\"ird\\ <script>window.rp_xss=1</script>\n<b>key</b>";
    const std::string limits = "rate=5/1s <i>concurrency</i>=1";

    TestBed bed;
    MysqlClient db = bed.db();
    db.exec(
        "CREATE TABLE user_block_status (user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL "
        "DEFAULT 0, updated_time DATETIME(3) NOT NULL, tenant VARCHAR(255) NOT NULL, "
        "KEY (updated_time), KEY tenant_order (tenant, updated_time)) ENGINE=InnoDB");
    db.exec(
        "INSERT INTO user_block_status (user_id, updated_time, tenant) SELECT seq, "
        "NOW(3) - INTERVAL 1 HOUR, " +
        sql_quote(key) + " FROM seq_1_to_5");
    QueueSpec queue;
    queue.name = "tenants";
    queue.extra_lines = {"group_by: tenant"};
    const int port = free_port();
    ConfigSpec spec = bed.config_spec({queue});
    spec.extra_lines = {"http:", "  listen: \"127.0.0.1:" + std::to_string(port) + "\"",
                        "due_count: { interval: 200ms }"};
    const std::string config = write_config(bed.dir.file("rowpump.yaml"), spec);
    migrate_apply(config);
    auto redis = bed.redis_client();
    redis.command({"HSET", rowpump::protocol::keys_for("tenants").key_limits, key, limits});
    auto dispatcher = bed.start_dispatcher(config);

    auto r = run_program(
        {"node", dir + "/dashboard.mjs", "--url", "http://127.0.0.1:" + std::to_string(port) + "/",
         "--queue", "tenants", "--key", key, "--key-limits", limits},
        90s);
    INFO(r.describe());
    CHECK(r.status.success());
}
