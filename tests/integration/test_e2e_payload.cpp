// `payload:` beyond what every SDK sees (tests/conformance/test_payload_fields.cpp): a row whose
// ready message would pass payload_max is reported failed with a reason naming its size, in
// both claim modes; `rowpump check` refuses a payload column the table lacks and warns when the
// columns' longest values can pass payload_max; tasks whose messages carry fields are found
// in Redis while a slow worker holds them (held.lua compares heads), so none runs twice; a
// sharded queue reports a dead worker's tasks by their heads (reap_to_done.lua); and
// the demo's worker checks the page its task carries, with the table deploy/seed.sql creates.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/rowpump_cli.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

constexpr std::int64_t kRows = 10;
constexpr std::int64_t kOversizedId = 7;

QueueSpec note_queue(const std::string& name, const std::string& claim) {
    QueueSpec q = e2e_queue();
    q.name = name;
    q.table = name;
    q.id = "id";
    q.order_by = "id";
    q.on_success = "status = :status, runs = runs + 1";
    q.claim = claim;
    q.lease = "5m";
    q.extra_lines = {"payload: [note]", "payload_max: 300"};
    return q;
}

void create_note_table(MysqlClient& db, const std::string& table) {
    db.exec("CREATE TABLE " + table +
            " (id INT NOT NULL PRIMARY KEY, status TINYINT NOT NULL DEFAULT 0, runs INT NOT NULL "
            "DEFAULT 0, note VARCHAR(400) CHARACTER SET ascii) ENGINE=InnoDB");
    db.exec("INSERT INTO " + table + " (id, note) SELECT seq, CONCAT('note ', seq) FROM seq_1_to_" +
            std::to_string(kRows));
    // 300 bytes percent-encoded: with "<id>:<token> note=" the message passes 300.
    db.exec("UPDATE " + table +
            " SET note = REPEAT('a', 300) WHERE id = " + std::to_string(kOversizedId));
}

// deploy/seed.sql's statements, one at a time (the test client runs one per call).
std::vector<std::string> seed_statements() {
    std::istringstream in(read_file(std::string(ROWPUMP_SOURCE_DIR) + "/deploy/seed.sql"));
    std::vector<std::string> statements;
    std::string line, statement;
    while (std::getline(in, line)) {
        if (line.rfind("--", 0) == 0) continue;
        statement += line + "\n";
        if (!line.empty() && line.back() == ';') {
            statements.push_back(statement);
            statement.clear();
        }
    }
    return statements;
}

}  // namespace

TEST_CASE("e2e: payload: a row whose ready message passes payload_max is reported failed",
          "[e2e][payload]") {
    TestBed bed;
    auto db = bed.db();
    const std::vector<std::string> queues = {"note_mysql", "note_redis"};
    std::vector<QueueSpec> specs;
    for (const auto& q : queues) {
        create_note_table(db, q);
        specs.push_back(note_queue(q, q == "note_redis" ? "redis" : "mysql"));
    }
    const auto config = bed.write_config(specs);
    migrate_apply(config);
    // VARCHAR(400): up to 1200 bytes percent-encoded, so check warns (and does not refuse).
    const auto check = rowpump_cli({"check", "-c", config});
    INFO(check.describe());
    CHECK(check.status.describe() == "exit code 0");
    CHECK(check.err.find("queues.note_mysql.payload: a ready message can take up to") !=
          std::string::npos);
    CHECK(check.err.find("(note varchar(400)), more than payload_max (300 bytes)") !=
          std::string::npos);

    auto dispatcher = bed.start_dispatcher(config);
    auto redis = bed.redis_client();
    std::vector<std::unique_ptr<TestWorkerProcess>> workers;
    for (const auto& q : queues) {
        TestWorkerSpec spec;
        spec.worker_id = "w-" + q;
        spec.queue = q;
        workers.push_back(std::make_unique<TestWorkerProcess>(ROWPUMP_TEST_WORKER, bed.redis.port(),
                                                              bed.dir, spec));
    }
    for (std::size_t w = 0; w < queues.size(); ++w) {
        const auto& q = queues[w];
        INFO("queue " << q);
        const auto oversized = std::to_string(kOversizedId);
        const bool settled = eventually(60s, [&] {
            return db.scalar("SELECT COUNT(*) FROM " + q + " WHERE status = 0 AND id <> " +
                             oversized) == 0 &&
                   db.scalar("SELECT COUNT(*) FROM " + q + " WHERE rp_dead_at IS NOT NULL") == 1;
        });
        INFO(describe_stats(redis, q) << "\ndispatcher log:\n" << dispatcher->log_tail());
        REQUIRE(settled);
        // Every other row once; the long one never reached a worker, and is dead with a
        // reason that names its size.
        CHECK(db.scalar("SELECT COUNT(*) FROM " + q + " WHERE id <> " + oversized +
                        " AND runs <> 1") == 0);
        CHECK(db.scalar("SELECT runs FROM " + q + " WHERE id = " + oversized) == 0);
        CHECK(db.scalar("SELECT COUNT(*) FROM " + q + " WHERE id = " + oversized +
                        " AND rp_dead_at IS NOT NULL") == 1);
        const auto reason =
            db.scalar_string("SELECT rp_last_error FROM " + q + " WHERE id = " + oversized);
        REQUIRE(reason);
        CHECK(reason->rfind("payload: the ready message would take ", 0) == 0);
        CHECK(reason->find(" bytes, more than payload_max (300 bytes)") != std::string::npos);
        for (const auto& task : workers[w]->handled()) CHECK(task.id != oversized);
        CHECK(workers[w]->handled().size() == static_cast<std::size_t>(kRows - 1));
        CHECK(queue_stat(redis, q, "completed") == kRows - 1);
        CHECK(queue_stat(redis, q, "dead") == 1);
        CHECK(queue_stat(redis, q, "bad") == 0);
        CHECK(queue_stat(redis, q, "stale") == 0);
    }
    CHECK(dispatcher->log_count("reported failed instead of pushed") == 2);
}

TEST_CASE("check: refuses a payload column the table lacks, and is quiet when all fit",
          "[cli][payload]") {
    TestBed bed;
    auto db = bed.db();
    db.exec(
        "CREATE TABLE small (id INT NOT NULL PRIMARY KEY, status TINYINT NOT NULL DEFAULT 0, "
        "runs INT NOT NULL DEFAULT 0, n INT, code VARCHAR(20) CHARACTER SET ascii, at DATETIME)");
    auto queue = note_queue("small", "mysql");
    queue.extra_lines = {"payload: [n, code, at]"};
    const auto fits = bed.write_config({queue}, "fits.yaml");
    migrate_apply(fits);
    auto result = rowpump_cli({"check", "-c", fits});
    {
        INFO(result.describe());
        CHECK(result.status.describe() == "exit code 0");
        CHECK(result.err.find("payload") == std::string::npos);
        // The claim reads the DATETIME column as ISO 8601 UTC.
        CHECK(result.out.find("CONVERT_TZ(`at`, @@global.time_zone, '+00:00')") !=
              std::string::npos);
    }

    queue.extra_lines = {"payload: [n, missing]"};
    const auto lacks = bed.write_config({queue}, "lacks.yaml");
    result = rowpump_cli({"check", "-c", lacks});
    {
        INFO(result.describe());
        CHECK(result.status.describe() == "exit code 1");
        CHECK(result.err.find("queues.small.payload: column 'missing' does not exist in table "
                              "'small'") != std::string::npos);
        CHECK(result.err.find("MySQL refuses") == std::string::npos);  // named once
    }
    // `run` refuses it at start-up too, naming the key.
    auto dispatcher = bed.start_dispatcher(lacks);
    const auto status = dispatcher->wait(30s);
    INFO(dispatcher->log());
    REQUIRE(status);
    CHECK(status->describe() == "exit code 2");
    CHECK(dispatcher->log().find("queues.small.payload: MySQL refuses the payload columns") !=
          std::string::npos);
}

TEST_CASE("e2e: payload: the demo's worker checks the page its task carries", "[e2e][payload]") {
    TestBed bed;
    auto db = bed.db();
    db.exec("SET @rows = 30");
    for (const auto& statement : seed_statements()) db.exec(statement);
    // Pages whose number is not the id: user i's page ends in 7 * i, which the example
    // worker's stand-in check calls blocked (status 2); from the id alone it would call six
    // in seven of them fine (status 1).
    db.exec(
        "UPDATE user_block_status SET page = CONCAT('https://example.com/users/', user_id * 7)");
    QueueSpec queue;  // deploy/demo.yaml's queue
    queue.name = "user_block_check";
    queue.extra_lines = {"payload: [page]"};
    const auto config = bed.write_config({queue});
    migrate_apply(config);
    auto dispatcher = bed.start_dispatcher(config);
    SpawnOptions options;
    options.stdout_path = bed.dir.file("example-worker.log");
    ChildProcess worker({ROWPUMP_EXAMPLE_WORKER, "--redis-port", std::to_string(bed.redis.port()),
                         "--queue", "user_block_check"},
                        options);
    const bool done = eventually(30s, [&] {
        return db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 0") == 0;
    });
    INFO(read_file(options.stdout_path) << dispatcher->log_tail());
    REQUIRE(done);
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status") == 30);
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 2") == 30);
}

// 400 rows, lease 2 s, one worker at ~90 tasks/s: most rows wait in Redis for longer than a
// lease. With claim: mysql the lease keeper renews the leases of tasks Redis still holds; with
// claim: redis the leader keeps them in flight; both ask held.lua by the head <id>:<token>, while
// the messages in the lists carry fields. Compared whole, as before payloads, none would be
// found: rows would be claimed and pushed again, and run twice.
TEST_CASE("e2e: payload: tasks with fields held longer than the lease run once each",
          "[e2e][payload]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    INFO("claim: " << claim);
    constexpr std::int64_t kSlowRows = 400;
    QueueSpec queue = e2e_queue();
    queue.lease = "2s";
    queue.max_backlog = 500;
    queue.claim = claim;
    queue.extra_lines = {"payload: [updated_time, status]"};
    E2eSystem sys(queue, kSlowRows);
    TestWorkerSpec spec;
    spec.worker_id = "slow";
    spec.work = std::chrono::milliseconds(11);
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, sys, spec);
    const bool done = eventually(
        120s, [&] { return queue_stat(sys.redis, "users", "completed") >= kSlowRows; }, 50ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(done);
    CHECK(sys.rows_left() == 0);
    CHECK(sys.rows_not_run_once() == 0);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["completed"] == kSlowRows);
    CHECK(stats["dispatched"] == kSlowRows);  // no row was claimed and pushed a second time
    CHECK(stats["stale"] == 0);
    if (claim == "mysql") CHECK(stats["renewed"] > 0);  // the rows did outlive a lease
    std::map<std::string, int> runs;
    for (const auto& task : worker.handled()) ++runs[task.id];
    CHECK(runs.size() == static_cast<std::size_t>(kSlowRows));
    for (const auto& [id, n] : runs) CHECK(n == 1);
}

// A queue with shards reports a dead worker's tasks on its behalf as retries (reap_to_done.lua),
// from the messages in its processing list: by their head, since a done message names its
// task by "<id>:<token>" alone. Reported whole, with the fields after the head, every such
// retry would be set aside as malformed and its row would wait for its lease (5 minutes).
TEST_CASE("e2e: payload: a sharded queue takes a dead worker's tasks with fields back as retries",
          "[e2e][payload][shards]") {
    QueueSpec queue = e2e_queue();
    queue.lease = "5m";
    queue.extra_lines = {"payload: [status, updated_time]", "shards:", "  - { name: a }"};
    E2eSystem sys(queue, 20);
    TestWorkerSpec doomed_spec;
    doomed_spec.worker_id = "doomed";
    doomed_spec.threads = 4;
    doomed_spec.work = std::chrono::milliseconds(60000);
    doomed_spec.heartbeat_ttl = std::chrono::milliseconds(1000);
    auto doomed = std::make_unique<TestWorkerProcess>(ROWPUMP_TEST_WORKER, sys, doomed_spec);
    REQUIRE(eventually(20s, [&] { return list_length(sys.redis, doomed->processing_key()) > 0; }));
    doomed->process().signal(SIGKILL);
    const bool reaped =
        eventually(20s, [&] { return queue_stat(sys.redis, "users", "reaped") > 0; });
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(reaped);

    TestWorkerSpec rest_spec;
    rest_spec.worker_id = "rest";
    TestWorkerProcess rest(ROWPUMP_TEST_WORKER, sys, rest_spec);
    const bool done = eventually(60s, [&] { return sys.rows_left() == 0; });
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\n"
                                            << sys.dispatcher->log_tail());
    REQUIRE(done);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(queue_stat(sys.redis, "users", "bad") == 0);
    CHECK(queue_stat(sys.redis, "users", "stale") == 0);
    CHECK(queue_stat(sys.redis, "users", "completed") == 20);
}
