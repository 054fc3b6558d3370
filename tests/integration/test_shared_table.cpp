// Two queues on one table. Sharing the bookkeeping columns is refused by `check` and `run`;
// with columns of their own, both make progress and each one's dead rows are its own to
// list and revive.

#include <chrono>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/rowpump_cli.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

constexpr std::int64_t kRows = 200;  // ids 1..200: 100 even, 100 odd

// Queue `name` over the rows of user_block_status whose id has the given parity.
QueueSpec parity_queue(const std::string& name, int parity) {
    QueueSpec q = e2e_queue();
    q.name = name;
    q.due = "status = 0 AND MOD(user_id, 2) = " + std::to_string(parity);
    return q;
}

const std::string kOwnColumns =
    "columns: { token: rp2_token, lease: rp2_lease_until, attempts: rp2_attempts, error: "
    "rp2_last_error, dead: rp2_dead_at, lease_index: rp2_lease_idx }";

}  // namespace

TEST_CASE("check: refuses two queues on one table that share bookkeeping columns", "[cli]") {
    TestBed bed;
    auto db = bed.db();
    create_e2e_table(db);
    // The table has the columns, so nothing else is wrong with the config.
    migrate_apply(bed.write_config({parity_queue("evens", 0)}, "evens.yaml"));
    const auto config = bed.write_config({parity_queue("evens", 0), parity_queue("odds", 1)});
    const std::string expected =
        "queues.odds.table: queue 'evens' uses the table 'user_block_status' too, with the token "
        "'rp_token' column: queues on one table need bookkeeping columns of their own";
    for (const std::string command : {"check", "run"}) {
        const auto result = rowpump_cli({command, "-c", config});
        INFO(command << ": " << result.describe());
        CHECK(result.status.describe() != "exit code 0");
        CHECK(result.err.find(expected) != std::string::npos);
    }
}

TEST_CASE(
    "e2e: two queues on one table with columns of their own both make progress, and each one's "
    "dead rows are its own (dead, retry)",
    "[e2e][dead][retry]") {
    TestBed bed;
    auto db = bed.db();
    auto redis = bed.redis_client();
    create_e2e_table(db);
    insert_e2e_rows(db, 1, kRows);
    QueueSpec evens = parity_queue("evens", 0), odds = parity_queue("odds", 1);
    evens.claim = "redis";
    odds.extra_lines = {kOwnColumns};
    const auto config = bed.write_config({evens, odds});
    migrate_apply(config);
    const auto check = rowpump_cli({"check", "-c", config});
    REQUIRE(check.status.describe() == "exit code 0");
    auto dispatcher = bed.start_dispatcher(config);

    // Every even row succeeds; every odd row fails at once, so it ends dead.
    TestWorkerSpec ok, failing;
    ok.worker_id = "evens-worker";
    ok.queue = "evens";
    failing.worker_id = "odds-worker";
    failing.queue = "odds";
    failing.extra_args = {"--fail-mode", "fail"};
    TestWorkerProcess a(ROWPUMP_TEST_WORKER, bed.redis.port(), bed.dir, ok);
    TestWorkerProcess b(ROWPUMP_TEST_WORKER, bed.redis.port(), bed.dir, failing);
    const bool both = eventually(60s, [&] {
        return queue_stat(redis, "evens", "completed") == kRows / 2 &&
               queue_stat(redis, "odds", "dead") == kRows / 2;
    });
    INFO("evens " << describe_stats(redis, "evens") << "; odds " << describe_stats(redis, "odds")
                  << "\ndispatcher log:\n"
                  << dispatcher->log_tail());
    REQUIRE(both);
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status WHERE MOD(user_id, 2) = 0 AND "
                    "(status <> 1 OR runs <> 1 OR rp_dead_at IS NOT NULL)") == 0);
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status WHERE MOD(user_id, 2) = 1 AND "
                    "rp2_dead_at IS NOT NULL AND rp_dead_at IS NULL AND status = 0") == kRows / 2);
    CHECK(queue_stat(redis, "evens", "stale") == 0);
    CHECK(queue_stat(redis, "odds", "stale") == 0);

    // Each queue lists its own dead rows only, and revives only its own.
    const auto dead_evens = rowpump_cli({"dead", "-c", config, "evens", "--limit", "1000"});
    const auto dead_odds = rowpump_cli({"dead", "-c", config, "odds", "--limit", "1000"});
    INFO(dead_evens.describe() << "\n" << dead_odds.describe());
    // One header line, then one line per row: "<id>\t<attempts>\t...".
    const auto listed = [](const std::string& out, int parity) {
        std::int64_t n = 0;
        for (std::int64_t id = 1; id <= kRows; ++id) {
            if (out.find("\n" + std::to_string(id) + "\t") != std::string::npos)
                n += id % 2 == parity ? 1 : 1000;  // a row of the other queue counts a lot
        }
        return n;
    };
    CHECK(dead_evens.status.describe() == "exit code 0");
    CHECK(listed(dead_evens.out, 0) == 0);
    CHECK(listed(dead_odds.out, 1) == kRows / 2);
    b.process().kill();  // the revived rows must stay revived while we look
    rowpump_cli({"retry", "-c", config, "evens", "--all"});
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status WHERE rp2_dead_at IS NOT NULL") ==
          kRows / 2);
    const auto revived = rowpump_cli({"retry", "-c", config, "odds", "--all"});
    INFO(revived.describe());
    CHECK(revived.status.describe() == "exit code 0");
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status WHERE rp2_dead_at IS NOT NULL") == 0);
}
