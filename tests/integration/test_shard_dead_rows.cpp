// Dead rows and the due count of a queue over two MariaDB shards: `rowpump dead` lists the dead
// rows of both with their shard, `rowpump retry --shard` revives an id on that shard only (the
// same id is a different row on the other, and stays dead), the revived row is processed, and
// `rowpump status` counts the due rows of both shards.

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/rowpump_cli.hpp"

using namespace rowpump::testing;
using Catch::Matchers::Contains;

namespace {

struct Shard {
    std::string name;
    MariaDb server;
    std::string database = server.create_database();

    MysqlClient db() const { return server.connect(database); }
    std::int64_t count(const std::string& where) const {
        return db().scalar("SELECT COUNT(*) FROM user_block_status WHERE " + where);
    }
};

// Row 2 dead on the shard: attempts used up, with an error to list.
void kill_row_2(const Shard& shard) {
    shard.db().exec(
        "UPDATE user_block_status SET rp_dead_at = NOW(), rp_attempts = 3, rp_last_error = "
        "'boom on " +
        shard.name + "' WHERE user_id = 2");
}

}  // namespace

TEST_CASE("shards: dead lists every shard's dead rows, retry revives on one shard, status sums",
          "[e2e][shards]") {
    TempDir dir("rowpump-shard-dead-");
    RedisServer redis_server;
    std::array<std::unique_ptr<Shard>, 2> shards;
    const std::array<std::int64_t, 2> rows{3, 5};
    for (std::size_t i = 0; i < shards.size(); ++i) {
        shards[i] = std::make_unique<Shard>();
        shards[i]->name = "s" + std::to_string(i);
        auto db = shards[i]->db();
        create_e2e_table(db);
        insert_e2e_rows(db, 1, rows[i]);
    }
    QueueSpec queue = e2e_queue();
    queue.extra_lines.push_back("shards:");
    for (const auto& shard : shards) {
        queue.extra_lines.push_back("  - name: " + shard->name);
        queue.extra_lines.push_back("    mysql: { port: " + std::to_string(shard->server.port()) +
                                    ", database: " + shard->database + " }");
    }
    const auto config =
        write_config(dir.file("rowpump.yaml"),
                     config_for(shards[0]->server, redis_server, shards[0]->database, {queue}));
    migrate_apply(config);
    for (const auto& shard : shards) kill_row_2(*shard);

    // Both shards' dead rows, each with its shard.
    RunResult dead = rowpump_cli({"dead", "-c", config, "users"});
    INFO(dead.describe());
    REQUIRE(dead.status.success());
    CHECK_THAT(dead.out, Contains("shard\tid\tattempts\tdead_at\tlast_error\n"));
    CHECK_THAT(dead.out, Contains("s0\t2\t3\t"));
    CHECK_THAT(dead.out, Contains("\tboom on s0\n"));
    CHECK_THAT(dead.out, Contains("s1\t2\t3\t"));
    CHECK_THAT(dead.out, Contains("\tboom on s1\n"));

    // No dispatcher runs, so status counts itself: every shard's due rows, the dead ones not.
    RunResult status = rowpump_cli({"status", "-c", config, "--json"});
    INFO(status.describe());
    REQUIRE(status.status.success());
    const auto look = nlohmann::json::parse(status.out);
    CHECK(look["due"] == (rows[0] - 1) + (rows[1] - 1));
    CHECK(look["due_counted_by"] == "status");

    // Without --shard the id is ambiguous: refused, naming the shards.
    RunResult unnamed = rowpump_cli({"retry", "-c", config, "users", "2"});
    INFO(unnamed.describe());
    CHECK(!unnamed.status.success());
    CHECK_THAT(unnamed.err,
               Contains("has shards (s0, s1): give --shard, the shard whose rows to change"));
    RunResult unknown = rowpump_cli({"retry", "-c", config, "users", "--shard", "s9", "2"});
    INFO(unknown.describe());
    CHECK(!unknown.status.success());
    CHECK_THAT(unknown.err, Contains("there is no shard 's9'"));
    CHECK(shards[0]->count("rp_dead_at IS NOT NULL") == 1);
    CHECK(shards[1]->count("rp_dead_at IS NOT NULL") == 1);

    RunResult retry = rowpump_cli({"retry", "-c", config, "users", "--shard", "s1", "2"});
    INFO(retry.describe());
    REQUIRE(retry.status.success());
    CHECK_THAT(retry.out, Contains("queue users shard s1: 1 dead row(s) are due again"));
    CHECK(shards[0]->count("user_id = 2 AND rp_dead_at IS NOT NULL") == 1);
    CHECK(shards[1]->count("rp_dead_at IS NOT NULL") == 0);

    // The revived row is processed; the same id on s0 stays dead and untouched.
    Dispatcher dispatcher(config, dir.file("dispatcher.log"));
    TestWorkerSpec spec;
    spec.worker_id = "w1";
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, redis_server.port(), dir, spec);
    const bool done = eventually(60s, [&] {
        return shards[1]->count("status = 0") == 0 && shards[0]->count("status = 0") == 1;
    });
    INFO(dispatcher.log_tail());
    REQUIRE(done);
    CHECK(shards[1]->count("runs <> 1") == 0);
    CHECK(shards[0]->count("user_id <> 2 AND runs <> 1") == 0);
    CHECK(shards[0]->count("user_id = 2 AND runs = 0 AND rp_dead_at IS NOT NULL AND "
                           "rp_last_error = 'boom on s0'") == 1);
}
