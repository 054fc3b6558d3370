// End to end with a worker that is not the SDK: a bash script driving redis-cli
// (redis_cli_worker.sh) takes part through the documented wire protocol alone.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;

namespace {

const std::string kScript =
    std::string(ROWPUMP_SOURCE_DIR) + "/tests/integration/redis_cli_worker.sh";

}  // namespace

TEST_CASE("e2e: a worker written with redis-cli only processes 200 rows end to end", "[e2e]") {
    constexpr std::int64_t kRows = 200;
    QueueSpec queue = e2e_queue();
    queue.batch = 50;
    queue.lease = "5m";  // a task the script lost would hold its row past the deadline
    E2eSystem sys(queue, kRows);
    const auto keys = sys.keys();

    SpawnOptions options;
    options.stdout_path = sys.bed.dir.file("redis-cli-worker.out");
    ChildProcess script(
        {"bash", kScript, "127.0.0.1", std::to_string(sys.bed.redis.port()), "users", "cli-worker"},
        options);

    const auto started = std::chrono::steady_clock::now();
    const bool done = eventually(
        45s, [&] { return sys.rows_left() == 0; }, 100ms);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\nscript output:\n"
                                            << read_file(options.stdout_path));
    REQUIRE(done);
    WARN("redis-cli worker completed " << kRows << " rows in " << took.count() << " ms");
    REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "completed") == kRows; }));
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(
        sys.db.scalar(std::string("SELECT COUNT(*) FROM user_block_status WHERE status <> 1 OR ") +
                      kClaimedSql) == 0);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["dispatched"] == kRows);
    CHECK(stats["bad"] == 0);
    CHECK(stats["stale"] == 0);
    CHECK(stats["reaped"] == 0);
    // The dispatcher published its protocol version, which the script checked.
    CHECK(sys.redis.command({"HGET", keys.meta, "protocol"}).string() == "1");
    // While it runs, the script is a listed worker with a live heartbeat.
    CHECK(sys.redis.command({"SISMEMBER", keys.workers, "cli-worker"}).integer() == 1);
    CHECK(sys.redis.command({"EXISTS", keys.heartbeat("cli-worker")}).integer() == 1);

    script.signal(SIGTERM);
    auto status = script.wait(5s);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
    CHECK(list_length(sys.redis, keys.processing("cli-worker")) == 0);
    CHECK(sys.redis.command({"EXISTS", keys.heartbeat("cli-worker")}).integer() == 0);
    CHECK(sys.redis.command({"SISMEMBER", keys.workers, "cli-worker"}).integer() == 0);
    CHECK(list_length(sys.redis, keys.bad) == 0);
}

TEST_CASE("e2e: a redis-cli worker extends a slow task's lease with a done message and keeps it",
          "[e2e]") {
    QueueSpec queue = e2e_queue();
    queue.lease = "5s";
    E2eSystem sys(queue, 1);
    const auto keys = sys.keys();

    SpawnOptions options;
    options.stdout_path = sys.bed.dir.file("redis-cli-worker.out");
    // Each task: extend to 60 s, work 3 s, report.
    ChildProcess script({"bash", kScript, "127.0.0.1", std::to_string(sys.bed.redis.port()),
                         "users", "cli-extender", "10000", "3", "60s"},
                        options);

    // The claim's lease (5 s) now ends about 60 s from now, and the task is still in hand.
    const bool extended = eventually(
        20s,
        [&] {
            return sys.db.scalar(
                       "SELECT COUNT(*) FROM user_block_status WHERE user_id = 1 AND status = 0 "
                       "AND "
                       "rp_lease_until > NOW(3) + INTERVAL 30 SECOND") == 1 &&
                   list_length(sys.redis, keys.processing("cli-extender")) == 1;
        },
        20ms);
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary() << "\nscript output:\n"
                                            << read_file(options.stdout_path));
    REQUIRE(extended);

    REQUIRE(eventually(20s, [&] { return sys.rows_left() == 0; }));
    REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "completed") == 1; }));
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(sys.rows_claimed() == 0);
    CHECK(sys.db.scalar(
              "SELECT COUNT(*) FROM user_block_status WHERE rp_lease_until IS NOT NULL") == 0);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["dispatched"] == 1);
    CHECK(stats["stale"] == 0);
    CHECK(stats["bad"] == 0);
    script.signal(SIGTERM);
    REQUIRE(script.wait(10s));
    CHECK(list_length(sys.redis, keys.processing("cli-extender")) == 0);
    CHECK(list_length(sys.redis, keys.bad) == 0);
}
