// `rowpump retry` on a queue whose on_dead changes a column the due condition reads: the
// retry either makes the rows due (the shipped config/one-shot.yaml, or an operator's --set)
// or changes nothing and says why; it never reports rows as due that are not.

#include <chrono>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/rowpump_cli.hpp"
#include "rowpump/testing/test_bed.hpp"
#include "rowpump/worker.hpp"

using namespace rowpump::testing;

namespace {

// The table of config/one-shot.yaml, as its comment creates it, with three pending jobs.
void create_jobs(MysqlClient& db) {
    db.exec(
        "CREATE TABLE jobs (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, "
        "status ENUM('pending', 'done', 'failed') NOT NULL DEFAULT 'pending', payload JSON NOT "
        "NULL, "
        "created_at DATETIME(3) NOT NULL DEFAULT NOW(3), finished_at DATETIME(3) NULL, "
        "INDEX (status, created_at))");
    db.exec("INSERT INTO jobs (payload) VALUES ('{}'), ('{}'), ('{}')");
}

// The queue of config/one-shot.yaml, as shipped, on the test's servers.
QueueSpec shipped_one_shot_queue() {
    const std::string path = std::string(ROWPUMP_SOURCE_DIR) + "/config/one-shot.yaml";
    ::setenv("ROWPUMP_MYSQL_PASSWORD", "unused", 0);
    const rowpump::Config config = rowpump::load_config(path);
    REQUIRE(config.queues.size() == 1);
    const rowpump::QueueConfig& jobs = config.queues[0];
    QueueSpec q;
    q.name = jobs.name;
    q.table = jobs.table;
    q.id = jobs.id;
    q.due = jobs.due.text;
    q.order_by = "created_at, id";
    q.on_success = jobs.on_success->text;
    q.on_dead = jobs.on_dead->text;
    q.lease = "5m";
    return q;
}

struct JobsSystem {
    explicit JobsSystem(const QueueSpec& queue) : db(bed.db()) {
        create_jobs(db);
        config = bed.write_config({queue});
        migrate_apply(config);
        dispatcher = bed.start_dispatcher(config);
        rowpump::WorkerOptions options;
        options.redis.port = bed.redis.port();
        options.queue = queue.name;
        worker = std::make_unique<rowpump::Worker>(options);
    }

    // Fetches the next job, which must be `id`, and reports `outcome` for it.
    void run(const std::string& id, const rowpump::Outcome& outcome, int attempt) {
        const std::optional<rowpump::Task> task = worker->fetch(10s);
        REQUIRE(task);
        CHECK(task->id == id);
        CHECK(task->attempt == attempt);
        REQUIRE(worker->complete(*task, outcome));
    }
    std::string status(const std::string& id) {
        return *db.scalar_string(
            "SELECT CONCAT(status, IF(rp_dead_at IS NULL, '', ' dead')) FROM jobs WHERE id = " +
            id);
    }

    TestBed bed;
    MysqlClient db;
    std::string config;
    std::unique_ptr<Dispatcher> dispatcher;
    std::unique_ptr<rowpump::Worker> worker;
};

}  // namespace

TEST_CASE("e2e: rowpump retry makes a failed job of config/one-shot.yaml run again", "[e2e]") {
    JobsSystem sys(shipped_one_shot_queue());
    sys.run("1", rowpump::Outcome::fail("bad payload"), 1);
    REQUIRE(eventually(10s, [&] { return sys.status("1") == "failed dead"; }));
    sys.run("2", rowpump::Outcome::success({}), 1);
    sys.run("3", rowpump::Outcome::success({}), 1);
    REQUIRE(eventually(10s, [&] { return sys.status("3") == "done"; }));

    RunResult retried = rowpump_cli({"retry", "-c", sys.config, "jobs", "1"});
    INFO(retried.describe());
    REQUIRE(retried.status.success());
    CHECK(retried.out.find("1 dead row(s) are due again") != std::string::npos);
    sys.run("1", rowpump::Outcome::success({}), 1);  // dispatched again, a fresh start
    REQUIRE(eventually(10s, [&] { return sys.status("1") == "done"; }));
    CHECK(sys.status("2") == "done");
}

TEST_CASE("e2e: rowpump retry refuses rows it would not make due, and --set makes them due",
          "[e2e]") {
    QueueSpec queue = shipped_one_shot_queue();
    queue.due = "status = 'pending'";  // what one-shot.yaml said before: a failed job is never due
    JobsSystem sys(queue);
    sys.run("1", rowpump::Outcome::fail("bad payload"), 1);
    sys.run("2", rowpump::Outcome::fail("bad payload"), 1);
    sys.run("3", rowpump::Outcome::success({}), 1);
    REQUIRE(eventually(
        10s, [&] { return sys.status("2") == "failed dead" && sys.status("3") == "done"; }));

    RunResult refused = rowpump_cli({"retry", "-c", sys.config, "jobs", "--all"});
    INFO(refused.describe());
    CHECK(!refused.status.success());
    CHECK(refused.out.find("due again") == std::string::npos);
    CHECK(refused.err.find(
              "nothing changed: 2 of the 2 dead row(s) would not be due after the retry (1, 2)") !=
          std::string::npos);
    CHECK(refused.err.find("on_dead (status = 'failed'") != std::string::npos);
    CHECK(refused.err.find("--set") != std::string::npos);
    CHECK(sys.status("1") == "failed dead");  // still listed by `rowpump dead`, nothing lost
    CHECK(sys.status("2") == "failed dead");

    RunResult unsafe = rowpump_cli(
        {"retry", "-c", sys.config, "jobs", "1", "--set", "status = 'pending'; DROP TABLE jobs"});
    CHECK(!unsafe.status.success());
    CHECK(unsafe.err.find("--set: ") != std::string::npos);
    RunResult still =
        rowpump_cli({"retry", "-c", sys.config, "jobs", "1", "--set", "finished_at = NULL"});
    CHECK(!still.status.success());
    CHECK(still.err.find("1 of the 1 dead row(s) would not be due") != std::string::npos);
    CHECK(still.err.find("even after --set") != std::string::npos);
    CHECK(sys.status("1") == "failed dead");

    RunResult revived =
        rowpump_cli({"retry", "-c", sys.config, "jobs", "1", "--set", "status = 'pending'"});
    INFO(revived.describe());
    REQUIRE(revived.status.success());
    CHECK(revived.out.find("1 dead row(s) are due again") != std::string::npos);
    sys.run("1", rowpump::Outcome::success({}), 1);
    REQUIRE(eventually(10s, [&] { return sys.status("1") == "done"; }));
    CHECK(sys.status("2") == "failed dead");
}
