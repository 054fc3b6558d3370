// Ids of every type a primary key may have: integers, CHAR(36) UUIDs, VARCHAR(191) utf8mb4
// ids outside ASCII (with the characters the ready message's percent-encoding must carry:
// ':', '%', ' '), and BINARY(16) UUIDs with bytes that are not UTF-8. Each table is
// processed end to end in both claim modes, by SDK workers and by the redis-cli worker, and
// `rowpump check` refuses an id column that does not name one row.

#include <signal.h>

#include <chrono>
#include <cstdint>
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

constexpr std::int64_t kRows = 20;

// An id column type and kRows SQL expressions making distinct ids of it.
struct IdKind {
    std::string type;
    std::vector<std::string> ids;
};

IdKind integer_ids() {
    IdKind kind{"BIGINT", {}};
    for (std::int64_t i = 1; i <= kRows; ++i) kind.ids.push_back(std::to_string(i * 1000003));
    return kind;
}

IdKind uuid_ids() {
    return {"CHAR(36) CHARACTER SET ascii", std::vector<std::string>(kRows, "UUID()")};
}

IdKind text_ids() {
    // Two to four bytes a character, the characters a ready message must encode, and ids of
    // 40 to 190 bytes.
    const std::vector<std::string> words = {"Zürich", "東京",       "🚀 launch", "a:b:c",
                                            "100%",   "naïve café", "x y",      "Ωmega"};
    IdKind kind{"VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", {}};
    for (std::int64_t i = 0; i < kRows; ++i) {
        std::string id = words[i % words.size()] + "-" + std::to_string(i) + "-";
        const std::size_t length = 40 + static_cast<std::size_t>(i) * 7;
        while (id.size() + 2 <= length) id += "ü";
        kind.ids.push_back(sql_quote(id));
    }
    return kind;
}

IdKind binary_ids() {
    // Random UUIDs, and ids with NUL and bytes that are never UTF-8 (0xFF, a lone 0x80).
    IdKind kind{"BINARY(16)",
                std::vector<std::string>(kRows - 3, "UNHEX(REPLACE(UUID(), '-', ''))")};
    kind.ids.push_back("UNHEX('00000000000000000000000000000000')");
    kind.ids.push_back("UNHEX('FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF')");
    kind.ids.push_back("UNHEX('80003A25200000000000000000000001')");
    return kind;
}

void create_jobs_table(MysqlClient& db, const std::string& table, const IdKind& kind) {
    db.exec("CREATE TABLE " + table + " (id " + kind.type +
            " NOT NULL PRIMARY KEY, status TINYINT NOT NULL DEFAULT 0, runs INT NOT NULL "
            "DEFAULT 0) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
    for (const auto& id : kind.ids) db.exec("INSERT INTO " + table + " (id) VALUES (" + id + ")");
    REQUIRE(db.scalar("SELECT COUNT(DISTINCT id) FROM " + table) == kRows);
}

QueueSpec jobs_queue(const std::string& name, const std::string& claim) {
    QueueSpec q;
    q.name = name;
    q.table = name;
    q.id = "id";
    q.due = "status = 0";
    q.order_by = "id";
    q.on_success = "status = :status, runs = runs + 1";
    q.claim = claim;
    q.lease = "5m";  // a task lost on the way would hold its row past the test's deadline
    return q;
}

// The same ids in a table per claim mode, one queue each (named after its table), one
// dispatcher for both.
struct TwoModes {
    explicit TwoModes(const IdKind& kind) : db(bed.db()), redis(bed.redis_client()) {
        for (const auto& mode : kModes) create_jobs_table(db, "jobs_" + mode, kind);
        config = bed.write_config(
            {jobs_queue("jobs_mysql", "mysql"), jobs_queue("jobs_redis", "redis")});
        migrate_apply(config);
        dispatcher = bed.start_dispatcher(config);
    }

    std::string summary(const std::string& mode) {
        std::string out = "jobs_" + mode + ": " + describe_stats(redis, "jobs_" + mode) +
                          "; rows by (status, runs, token length): ";
        for (const Row& r : db.rows("SELECT status, runs, LENGTH(rp_token), COUNT(*) FROM jobs_" +
                                    mode + " GROUP BY 1, 2, 3")) {
            out += "(" + r[0].value_or("NULL") + ", " + r[1].value_or("NULL") + ", " +
                   r[2].value_or("NULL") + "): " + r[3].value_or("?") + "; ";
        }
        return out;
    }

    static inline const std::vector<std::string> kModes = {"mysql", "redis"};
    TestBed bed;
    MysqlClient db;
    rowpump::redis::Connection redis;
    std::string config;
    std::unique_ptr<Dispatcher> dispatcher;
};

// Every row of both tables completed exactly once, nothing stale, bad or dispatched twice.
void check_all_done_once(TwoModes& sys) {
    for (const auto& mode : TwoModes::kModes) {
        const std::string table = "jobs_" + mode;
        const bool done = eventually(30s, [&] {
            return queue_stat(sys.redis, table, "completed") >= kRows &&
                   sys.db.scalar("SELECT COUNT(*) FROM " + table + " WHERE status = 0") == 0;
        });
        INFO(sys.summary(mode) << "\ndispatcher log:\n" << sys.dispatcher->log_tail());
        CHECK(done);
        CHECK(sys.db.scalar("SELECT COUNT(*) FROM " + table + " WHERE runs <> 1 OR status <> 1") ==
              0);
        auto stats = queue_stats(sys.redis, table);
        CHECK(stats["completed"] == kRows);
        CHECK(stats["dispatched"] == kRows);
        CHECK(stats["bad"] == 0);
        CHECK(stats["stale"] == 0);
    }
    CHECK(sys.dispatcher->log().find(" error ") == std::string::npos);
}

void run_sdk_workers(const IdKind& kind) {
    TwoModes sys(kind);
    TestWorkerSpec mysql_worker, redis_worker;
    mysql_worker.worker_id = "worker-mysql";
    redis_worker.worker_id = "worker-redis";
    mysql_worker.queue = "jobs_mysql";
    redis_worker.queue = "jobs_redis";
    mysql_worker.threads = redis_worker.threads = 2;
    TestWorkerProcess a(ROWPUMP_TEST_WORKER, sys.bed.redis.port(), sys.bed.dir, mysql_worker);
    TestWorkerProcess b(ROWPUMP_TEST_WORKER, sys.bed.redis.port(), sys.bed.dir, redis_worker);
    check_all_done_once(sys);
}

}  // namespace

TEST_CASE("e2e: ids: BIGINT ids complete once in both claim modes", "[e2e][ids]") {
    run_sdk_workers(integer_ids());
}

TEST_CASE("e2e: ids: CHAR(36) UUID ids complete once in both claim modes", "[e2e][ids]") {
    run_sdk_workers(uuid_ids());
}

TEST_CASE("e2e: ids: VARCHAR(191) utf8mb4 ids outside ASCII complete once in both claim modes",
          "[e2e][ids]") {
    run_sdk_workers(text_ids());
}

TEST_CASE("e2e: ids: BINARY(16) ids, NUL and non-UTF-8 bytes, complete once in both claim modes",
          "[e2e][ids]") {
    run_sdk_workers(binary_ids());
}

TEST_CASE("e2e: ids: the redis-cli worker completes utf8mb4 string ids, percent-encoded",
          "[e2e][ids]") {
    TwoModes sys(text_ids());
    const std::string script =
        std::string(ROWPUMP_SOURCE_DIR) + "/tests/integration/redis_cli_worker.sh";
    std::vector<std::unique_ptr<ChildProcess>> scripts;
    for (const auto& mode : TwoModes::kModes) {
        SpawnOptions options;
        options.stdout_path = sys.bed.dir.file("redis-cli-" + mode + ".out");
        scripts.push_back(std::make_unique<ChildProcess>(
            std::vector<std::string>{"bash", script, "127.0.0.1",
                                     std::to_string(sys.bed.redis.port()), "jobs_" + mode,
                                     "cli-" + mode},
            options));
    }
    check_all_done_once(sys);
    for (auto& s : scripts) {
        s->signal(SIGTERM);
        CHECK(s->wait(10s));
    }
}

TEST_CASE("check: refuses an id column that is not the primary key or a unique NOT NULL key",
          "[cli][ids]") {
    TestBed bed;
    auto db = bed.db();
    // Not unique: one outcome would change every row with that id.
    db.exec(
        "CREATE TABLE plain_key (id INT NOT NULL, status TINYINT NOT NULL DEFAULT 0, "
        "runs INT NOT NULL DEFAULT 0, pk INT AUTO_INCREMENT PRIMARY KEY, KEY (id))");
    // Unique but NULL allowed: several rows may have a NULL id.
    db.exec(
        "CREATE TABLE nullable_key (id INT NULL, status TINYINT NOT NULL DEFAULT 0, "
        "runs INT NOT NULL DEFAULT 0, pk INT AUTO_INCREMENT PRIMARY KEY, UNIQUE KEY (id))");
    // Unique and NOT NULL: accepted.
    db.exec(
        "CREATE TABLE unique_key (id VARCHAR(40) NOT NULL, status TINYINT NOT NULL "
        "DEFAULT 0, runs INT NOT NULL DEFAULT 0, pk INT AUTO_INCREMENT PRIMARY KEY, "
        "UNIQUE KEY (id))");
    for (const std::string table : {"plain_key", "nullable_key", "unique_key"}) {
        const auto config = bed.write_config({jobs_queue(table, "mysql")}, table + ".yaml");
        migrate_apply(config);
        const auto result = rowpump_cli({"check", "-c", config});
        INFO(result.describe());
        if (table == "unique_key") {
            CHECK(result.status.describe() == "exit code 0");
            continue;
        }
        CHECK(result.status.describe() == "exit code 1");
        CHECK(result.err.find("queues." + table +
                              ".id: column 'id' is not the primary key or a "
                              "unique NOT NULL key of table '" +
                              table + "'") != std::string::npos);
    }
}
