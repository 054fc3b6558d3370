// The dashboard's JSON and its actions: tokens, retry, discard, pause, and their effect in
// MySQL and Redis; for a queue with shards too, with the due count summed over them.

#include <array>
#include <set>
#include <string>

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

TEST_CASE("dashboard: a queue with shards lists every shard's dead rows, acts on the one named",
          "[http][dashboard][shards]") {
    // Two shards as two databases of a server of their own; the same ids on both.
    MariaDb server;
    const std::array<std::string, 2> names{"s0", "s1"};
    const std::array<std::string, 2> databases{server.create_database(), server.create_database()};
    QueueSpec queue = e2e_queue();
    queue.extra_lines.push_back("shards:");
    for (std::size_t i = 0; i < names.size(); ++i) {
        auto db = server.connect(databases[i]);
        create_e2e_table(db);
        insert_e2e_rows(db, 1, 3);
        queue.extra_lines.push_back("  - name: " + names[i]);
        queue.extra_lines.push_back("    mysql: { port: " + std::to_string(server.port()) +
                                    ", database: " + databases[i] + " }");
    }
    HttpSystem sys(queue, 1, fast_due_count());
    auto dead_on = [&](std::size_t shard) {
        return server.connect(databases[shard])
            .scalar(
                "SELECT COUNT(*) FROM user_block_status WHERE user_id = 2 AND "
                "rp_dead_at IS NOT NULL");
    };
    for (const auto& database : databases) {
        server.connect(database).exec(
            "UPDATE user_block_status SET rp_dead_at = NOW(), rp_attempts = 3 WHERE user_id = 2");
    }
    // Paused, the rows stay due: the leader's count is both shards' due rows, the dead not.
    REQUIRE(rowpump_cli({"pause", "-c", sys.config, "users"}).status.success());
    sys.start();
    CHECK(eventually(10s, [&] { return sys.metric("rowpump_due_backlog") == 4; }));

    REQUIRE(eventually(10s, [&] {
        return json::parse(sys.get("/api/state").body)["queues"][0]["dead"].size() == 2;
    }));
    std::set<std::string> listed;
    const auto state = json::parse(sys.get("/api/state").body);
    for (const auto& row : state["queues"][0]["dead"])
        listed.insert(row["shard"].get<std::string>() + ":" + row["id"].get<std::string>());
    CHECK(listed == std::set<std::string>{"s0:2", "s1:2"});

    const auto unnamed = sys.post("/api/queues/users/retry", R"({"ids":["2"]})");
    CHECK(unnamed.status == 400);
    CHECK(contains(unnamed.body, "has shards (s0, s1): give \\\"shard\\\""));
    CHECK(sys.post("/api/queues/users/retry", R"({"ids":["2"],"shard":"s9"})").status == 400);
    CHECK(dead_on(0) == 1);
    CHECK(dead_on(1) == 1);

    const auto retried = sys.post("/api/queues/users/retry", R"({"ids":["2"],"shard":"s1"})");
    INFO(retried.body);
    CHECK(retried.status == 200);
    CHECK(dead_on(1) == 0);
    CHECK(dead_on(0) == 1);
    CHECK(eventually(10s, [&] { return sys.metric("rowpump_due_backlog") == 5; }));
    CHECK(sys.post("/api/queues/users/discard", R"({"ids":["2"],"shard":"s0","mode":"forget"})")
              .status == 200);
    CHECK(dead_on(0) == 0);
    CHECK(contains(sys.dispatcher->log(),
                   "info http: queue users: shard s1: retry ids 2: 1 dead row(s) due again"));
}
