// End to end: a task that keeps asking for a retry waits out the backoff each time, is dead
// after max_attempts, shows up in `rowpump dead`, and runs again after `rowpump retry`.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/e2e_worker.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;
using rowpump::Outcome;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

constexpr std::int64_t kBaseMs = 2000;

struct RowState {
    std::string status, runs, attempts;
    std::optional<std::string> token, lease_until, last_error, dead_at;
};

RowState row_state(MysqlClient& db) {
    auto rows = db.rows(
        "SELECT status, runs, rp_attempts, rp_token, rp_lease_until, rp_last_error, rp_dead_at "
        "FROM user_block_status WHERE user_id = 1");
    if (rows.size() != 1) throw std::runtime_error("row 1 is missing");
    const Row& r = rows[0];
    return {r[0].value_or("NULL"),
            r[1].value_or("NULL"),
            r[2].value_or("NULL"),
            r[3],
            r[4],
            r[5],
            r[6]};
}

std::string db_now(MysqlClient& db) {
    return *db.scalar_string("SELECT NOW(3)");
}

// Milliseconds from DATETIME text `from` to `to` (an SQL expression), in the database's clock.
std::int64_t db_millis(MysqlClient& db, const std::string& from, const std::string& to) {
    return db.scalar("SELECT TIMESTAMPDIFF(MICROSECOND, " + sql_quote(from) + ", " + to +
                     ") DIV 1000");
}

}  // namespace

TEST_CASE(
    "e2e: retries wait out the backoff and the row is dead after max_attempts until rowpump retry "
    "revives it",
    "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    INFO("claim: " << claim);
    QueueSpec queue = e2e_queue();
    queue.claim = claim;
    queue.due = "status <> 1";  // not done yet: new rows, and given-up rows once revived
    queue.lease = "30s";
    queue.on_dead = "status = 3";
    queue.extra_lines = {"retry: { base: 2s, cap: 1m, max_attempts: 3 }"};
    E2eSystem sys(queue, 1);
    rowpump::Worker worker(e2e_worker_options(sys, "retrier"));

    std::optional<rowpump::Task> task = worker.fetch(10s);
    REQUIRE(task);
    CHECK(task->attempt == 1);
    for (int failed = 1; failed <= 2; ++failed) {
        INFO("failed attempt " << failed);
        const std::string reason = "upstream timeout on attempt " + std::to_string(failed);
        const std::string reported_at = db_now(sys.db);
        const auto reported = steady_clock::now();
        REQUIRE(worker.complete(*task, Outcome::retry(reason)));
        REQUIRE(
            eventually(10s, [&] { return row_state(sys.db).attempts == std::to_string(failed); }));

        // base * 2^(failed-1), "equal jitter": at least half of it, less than all of it.
        const std::int64_t backoff = kBaseMs << (failed - 1);
        RowState state = row_state(sys.db);
        REQUIRE(state.lease_until);
        const std::int64_t not_before =
            db_millis(sys.db, reported_at, sql_quote(*state.lease_until));
        CHECK(not_before >= backoff / 2);
        CHECK(not_before < backoff + 1000);  // plus the time the report took to be applied
        CHECK(state.token == settled_token(task->token));
        CHECK(state.last_error.value_or("NULL") == reason);

        std::optional<rowpump::Task> next = worker.fetch(15s);
        REQUIRE(next);
        const auto waited = duration_cast<milliseconds>(steady_clock::now() - reported);
        // Delivered no sooner than the "not before" the database recorded, in its own clock.
        CHECK(db_millis(sys.db, *state.lease_until, "NOW(3)") >= 0);
        CHECK(waited.count() >= backoff / 2 - 5);  // 5 ms: DATETIME(3) truncation
        CHECK(next->id == "1");
        CHECK(next->attempt == failed + 1);
        CHECK(next->token != task->token);
        task = next;
    }

    REQUIRE(worker.complete(*task, Outcome::retry("upstream timeout on attempt 3")));
    REQUIRE(eventually(10s, [&] { return row_state(sys.db).dead_at.has_value(); }));
    RowState dead = row_state(sys.db);
    CHECK(dead.attempts == "3");
    CHECK(dead.last_error.value_or("NULL") == "upstream timeout on attempt 3");
    CHECK(dead.status == "3");  // on_dead
    CHECK(dead.runs == "0");
    CHECK(dead.token == settled_token(task->token));
    CHECK(!dead.lease_until);
    // The counters are written to Redis just after the MySQL commit the row shows.
    CHECK(eventually(10s, [&] { return queue_stat(sys.redis, "users", "dead") == 1; }));
    CHECK(queue_stat(sys.redis, "users", "retried") == 2);
    // A dead row is not dispatched again (the poll interval is at most 100 ms).
    CHECK(!worker.fetch(1500ms));

    RunResult listed = rowpump_cli({"dead", "-c", sys.config, "users"});
    INFO(listed.describe());
    REQUIRE(listed.status.success());
    CHECK(listed.out.find("\n1\t3\t") != std::string::npos);
    CHECK(listed.out.find("upstream timeout on attempt 3") != std::string::npos);

    RunResult revived = rowpump_cli({"retry", "-c", sys.config, "users", "1"});
    INFO(revived.describe());
    REQUIRE(revived.status.success());
    CHECK(revived.out.find("1 dead row(s) are due again") != std::string::npos);

    std::optional<rowpump::Task> again = worker.fetch(10s);
    REQUIRE(again);
    CHECK(again->id == "1");
    CHECK(again->attempt == 1);  // a revived row starts over
    REQUIRE(worker.complete(*again, Outcome::success({{"status", "1"}})));
    REQUIRE(eventually(10s, [&] { return row_state(sys.db).status == "1"; }));
    RowState done = row_state(sys.db);
    CHECK(done.runs == "1");
    CHECK(done.attempts == "0");
    CHECK(!done.last_error);
    CHECK(!done.dead_at);
    CHECK(done.token == settled_token(again->token));
    CHECK(!done.lease_until);
    // The counter is written to Redis just after the MySQL commit the row shows.
    CHECK(eventually(10s, [&] { return queue_stat(sys.redis, "users", "completed") == 1; }));

    RunResult listed_after = rowpump_cli({"dead", "-c", sys.config, "users"});
    REQUIRE(listed_after.status.success());
    CHECK(listed_after.out.find("\n1\t") == std::string::npos);
}
