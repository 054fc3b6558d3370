// The dashboard's JSON and its actions: tokens, retry, discard, pause, and their effect in
// MySQL and Redis.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "http_system.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;
using nlohmann::json;

namespace {

// Dispatches rows 1..n and reports rows 1..dead as failed, the rest ok.
void make_dead_rows(HttpSystem& sys, std::int64_t n, std::int64_t dead) {
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, sys.keys().ready) == n; }));
    std::vector<std::string> done;
    for (const auto& task : parse_ready_all(pop_ready(sys.redis, "users", n))) {
        done.push_back(task.message + (std::stoll(task.id) <= dead ? " fail reason=broken%20row"
                                                                   : " ok status=1"));
    }
    push_done(sys.redis, "users", done);
    REQUIRE(eventually(10s, [&] {
        return sys.db.scalar(
                   "SELECT COUNT(*) FROM user_block_status WHERE rp_dead_at IS NOT NULL") == dead;
    }));
}

bool is_dead(HttpSystem& sys, int id) {
    return sys.db.scalar(
               "SELECT COUNT(*) FROM user_block_status WHERE rp_dead_at IS NOT NULL "
               "AND user_id = " +
               std::to_string(id)) == 1;
}

}  // namespace

TEST_CASE("dashboard actions need the token and change MySQL and Redis", "[http][dashboard]") {
    QueueSpec queue = e2e_queue();
    queue.on_dead = "runs = runs + 100";  // leaves the row due (status 0), so retry works
    HttpSystem sys(queue, 6);
    sys.start();
    make_dead_rows(sys, 6, 4);

    // The dead rows reach the dashboard's JSON, with their error.
    REQUIRE(eventually(10s, [&] {
        return json::parse(sys.get("/api/state").body)["queues"][0]["dead"].size() == 4;
    }));
    const auto state = json::parse(sys.get("/api/state").body);
    CHECK(state["actions"] == true);
    CHECK(state["queues"][0]["dead"][0]["error"] == "broken row");
    CHECK(state["queues"][0]["stats"]["dead"] == 4);

    CHECK(sys.post("/api/queues/users/retry", R"({"ids":["1"]})", "").status == 401);
    CHECK(
        sys.post("/api/queues/users/retry", R"({"ids":["1"]})", "wrong-token-0123456789").status ==
        401);
    CHECK(sys.post("/api/queues/nope/retry", R"({"ids":["1"]})").status == 404);
    CHECK(sys.post("/api/queues/users/retry", "{not json").status == 400);
    CHECK(sys.post("/api/queues/users/discard", R"({"ids":["2"],"mode":"burn"})").status == 400);
    CHECK(is_dead(sys, 1));

    auto retried = sys.post("/api/queues/users/retry", R"({"ids":["1"]})");
    INFO(retried.body);
    CHECK(retried.status == 200);
    CHECK_FALSE(is_dead(sys, 1));  // due again: the dispatcher hands it out once more
    CHECK(eventually(10s, [&] { return list_length(sys.redis, sys.keys().ready) == 1; }));

    CHECK(sys.post("/api/queues/users/discard", R"({"ids":["2"],"mode":"on_dead"})").status == 200);
    CHECK(sys.db.scalar("SELECT runs FROM user_block_status WHERE user_id = 2") == 200);
    CHECK_FALSE(is_dead(sys, 2));
    CHECK(sys.post("/api/queues/users/discard", R"({"ids":["3"],"mode":"forget"})").status == 200);
    CHECK_FALSE(is_dead(sys, 3));
    CHECK(sys.db.scalar("SELECT rp_attempts FROM user_block_status WHERE user_id = 3") == 0);

    CHECK(sys.post("/api/queues/users/pause", "").status == 200);
    CHECK(sys.redis.command({"EXISTS", sys.keys().paused}).integer() == 1);
    // Once the loop has seen the pause, no cycle claims any more.
    REQUIRE(eventually(10s, [&] { return sys.metric("rowpump_paused") == 1; }));
    CHECK(sys.post("/api/queues/users/retry", R"({"all":true})").status == 200);
    CHECK_FALSE(is_dead(sys, 4));
    CHECK(eventually(10s, [&] {
        return json::parse(sys.get("/api/state").body)["queues"][0]["paused"] == true;
    }));
    // Paused: row 4 is due and stays in MySQL.
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE user_id = 4 AND "
                        "rp_token IS NULL") == 1);
    CHECK(sys.post("/api/queues/users/resume", "").status == 200);
    CHECK(sys.redis.command({"EXISTS", sys.keys().paused}).integer() == 0);
    CHECK(eventually(10s, [&] { return list_length(sys.redis, sys.keys().ready) >= 2; }));

    const auto log = sys.dispatcher->log();
    CHECK(contains(log, "info http: queue users: retry ids 1: 1 dead row(s) due again"));
    CHECK(contains(log, "info http: queue users: paused (dashboard, from 127.0.0.1)"));
    CHECK(contains(log, "wrong or missing token"));
}

TEST_CASE("dashboard actions are refused unless switched on", "[http][dashboard]") {
    HttpSystem sys(e2e_queue(), 1, {}, /*actions=*/false);
    sys.start();
    CHECK(sys.post("/api/queues/users/pause", "").status == 403);
    CHECK(sys.redis.command({"EXISTS", sys.keys().paused}).integer() == 0);
    const auto page = sys.get("/");
    CHECK(page.status == 200);
    CHECK(contains(page.body, "<script src=\"dashboard.js\""));
    CHECK(sys.get("/dashboard.js").status == 200);
}
