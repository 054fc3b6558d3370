// End to end with a worker that is not the SDK: a bash script driving redis-cli
// (redis_cli_worker.sh) takes part through the documented wire protocol alone.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "support/e2e_system.hpp"
#include "support/eventually.hpp"
#include "support/queue_redis.hpp"

using namespace rowpump::test;

namespace {

const std::string kScript =
    std::string(ROWPUMP_SOURCE_DIR) + "/tests/integration/redis_cli_worker.sh";

}  // namespace

TEST_CASE("e2e: the redis-cli script follows the protocol's complete script verbatim", "[e2e]") {
    const std::string script = read_file(kScript);
    REQUIRE(!script.empty());
    CHECK(script.find("complete_script=\"" + std::string(rowpump::protocol::kCompleteScript) +
                      "\"") != std::string::npos);
}

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
    CHECK(sys.db.scalar(
              "SELECT COUNT(*) FROM user_block_status WHERE status <> 1 OR rp_token IS NOT NULL") ==
          0);
    auto stats = queue_stats(sys.redis, "users");
    CHECK(stats["dispatched"] == kRows);
    CHECK(stats["bad"] == 0);
    CHECK(stats["stale"] == 0);
    CHECK(stats["reaped"] == 0);
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
