// The one-shot subcommands against real servers: check, migrate, and config errors.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/seed.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

std::int64_t bookkeeping_columns(MysqlClient& db) {
    return db.scalar(
        "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
        "AND TABLE_NAME = 'user_block_status' AND COLUMN_NAME IN "
        "('rp_token', 'rp_lease_until', 'rp_attempts', 'rp_last_error', 'rp_dead_at')");
}

std::string create_table(MysqlClient& db) {
    return *db.rows("SHOW CREATE TABLE user_block_status").at(0).at(1);
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Line number (1-based) of the first line of `text` that contains `part`.
int line_of(const std::string& text, const std::string& part) {
    std::size_t at = text.find(part);
    REQUIRE(at != std::string::npos);
    return 1 + static_cast<int>(
                   std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
    std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("rowpump migrate prints the ALTER TABLE without --apply and --apply twice is harmless",
          "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 10);
    std::string config = bed.write_config();
    const std::string before = create_table(db);

    RunResult dry = rowpump_cli({"migrate", "-c", config});
    INFO(dry.describe());
    CHECK(dry.status.success());
    CHECK(contains(dry.out, "ALTER TABLE"));
    CHECK(contains(dry.out, "rp_token"));
    CHECK(create_table(db) == before);
    CHECK(bookkeeping_columns(db) == 0);

    RunResult first = rowpump_cli({"migrate", "-c", config, "--apply"});
    INFO(first.describe());
    REQUIRE(first.status.success());
    CHECK(bookkeeping_columns(db) == 5);
    CHECK(db.scalar(
              "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = "
              "DATABASE() AND TABLE_NAME = 'user_block_status' AND INDEX_NAME = 'rp_lease_idx'") ==
          1);
    const std::string migrated = create_table(db);

    RunResult second = rowpump_cli({"migrate", "-c", config, "--apply"});
    INFO(second.describe());
    CHECK(second.status.success());
    CHECK(create_table(db) == migrated);
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status") == 10);
}

TEST_CASE("rowpump check passes on a migrated table and prints the claim statement",
          "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    create_user_block_status(db);
    insert_users(db, 1, 2000, "NOW(3)");  // most rows are not due ...
    insert_users(db, 5001, 20);           // ... so the index is worth using
    std::string config = bed.write_config();
    migrate_apply(config);

    RunResult r = rowpump_cli({"check", "-c", config});
    INFO(r.describe());
    CHECK(r.status.success());
    CHECK(contains(r.out, ": ok (MariaDB 10."));  // the server, as its dialect was chosen
    CHECK(contains(r.out, "UPDATE `user_block_status`"));
    CHECK_FALSE(contains(r.out + r.err, "reads the whole table"));

    RunResult strict = rowpump_cli({"check", "-c", config, "--strict"});
    INFO(strict.describe());
    CHECK(strict.status.success());
}

TEST_CASE("rowpump check says which claim mode a queue uses and whether the default chose it",
          "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    create_user_block_status(db);
    QueueSpec by_default;
    by_default.claim = "default";  // no claim: key
    const std::string default_config = bed.write_config({by_default}, "default.yaml");
    migrate_apply(default_config);
    RunResult r = rowpump_cli({"check", "-c", default_config});
    INFO(r.describe());
    CHECK(r.status.success());
    CHECK(contains(r.out, "queue users: ok; claim: redis (the default)"));
    CHECK(contains(r.out, "Pick mysql for rows that show their claim"));

    QueueSpec asked;
    asked.claim = "mysql";
    RunResult m = rowpump_cli({"check", "-c", bed.write_config({asked}, "mysql.yaml")});
    INFO(m.describe());
    CHECK(m.status.success());
    CHECK(contains(m.out, "queue users: ok; claim: mysql (set in the config)"));
    CHECK(contains(m.out, "Pick redis for about half the MySQL work per task"));

    QueueSpec two_columns;
    two_columns.claim = "default";
    two_columns.order_by = "updated_time, user_id";
    RunResult t = rowpump_cli({"check", "-c", bed.write_config({two_columns}, "two.yaml")});
    INFO(t.describe());
    CHECK(t.status.success());
    CHECK(contains(t.out,
                   "queue users: ok; claim: mysql (the default for this queue: claim: "
                   "redis does not work with an order_by of several columns yet)"));
}

TEST_CASE("rowpump check fails clearly when the bookkeeping columns are missing", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 10);
    std::string config = bed.write_config();

    RunResult r = rowpump_cli({"check", "-c", config});
    INFO(r.describe());
    CHECK_FALSE(r.status.success());
    CHECK(contains(r.err, "rp_token"));
    CHECK(contains(r.err, "migrate"));
}

TEST_CASE("rowpump check fails clearly when MySQL is down", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 10);
    std::string config = bed.write_config();
    migrate_apply(config);
    bed.mysql.stop();

    RunResult r = rowpump_cli({"check", "-c", config});
    INFO(r.describe());
    CHECK_FALSE(r.status.success());
    CHECK(contains(r.err, "127.0.0.1:" + std::to_string(bed.mysql.port())));
}

TEST_CASE("rowpump check fails clearly when Redis is down", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 10);
    std::string config = bed.write_config();
    migrate_apply(config);
    bed.redis.stop();

    RunResult r = rowpump_cli({"check", "-c", config});
    INFO(r.describe());
    CHECK_FALSE(r.status.success());
    CHECK(contains(r.err, "redis 127.0.0.1:" + std::to_string(bed.redis.port())));
}

TEST_CASE("rowpump check warns when the due condition has no usable index", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 2000);
    QueueSpec queue;
    queue.due = "status = 0";  // no index on status
    queue.order_by = "";
    std::string config = bed.write_config({queue});
    migrate_apply(config);

    RunResult r = rowpump_cli({"check", "-c", config});
    INFO(r.describe());
    CHECK(r.status.success());  // a warning, not an error ...
    CHECK(contains(r.err, "warning"));
    CHECK(contains(r.err, "reads the whole table"));
    RunResult strict = rowpump_cli({"check", "-c", config, "--strict"});
    INFO(strict.describe());
    CHECK_FALSE(strict.status.success());  // ... unless --strict
}

TEST_CASE("rowpump run with a bad config exits non-zero naming file and line and key",
          "[dispatcher]") {
    TempDir dir("rowpump-it-");
    ConfigSpec spec;
    spec.database = "app";
    spec.user = "rowpump";
    spec.mysql_port = free_port();  // nothing listens: a config that loads would hang, not exit
    spec.redis_port = free_port();
    spec.queues = {QueueSpec{}};
    const std::string good = render_config(spec);

    struct Case {
        std::string what, from, to, key;
    };
    std::vector<Case> cases = {
        {"negative batch", "    batch: 1000", "    batch: -5", "queues.users.batch"},
        {"unknown key", "    batch: 1000", "    bacth: 1000", "queues.users.bacth"},
        {"unsafe table name", "    table: user_block_status", "    table: \"users; DROP TABLE x\"",
         "queues.users.table"},
        {"bad duration", "    lease: 60s", "    lease: sixty", "queues.users.lease"},
        {"bad rate", "    max_backlog: 200000", "    max_backlog: 200000\n    rate: \"fast\"",
         "queues.users.rate"},
    };
    for (const auto& c : cases) {
        SECTION(c.what) {
            std::string text = replace_once(good, c.from, c.to);
            const std::string path = dir.file("bad.yaml");
            write_file(path, text);
            int line = line_of(text, c.key.substr(c.key.rfind('.') + 1) + ":");
            RunResult r = rowpump_cli({"run", "-c", path}, 10s);
            INFO(r.describe());
            CHECK_FALSE(r.status.success());
            CHECK(contains(r.err, path + ":" + std::to_string(line) + ":"));
            CHECK(contains(r.err, c.key));
        }
    }
}

TEST_CASE("the global --log-level is accepted before and after the subcommand", "[dispatcher]") {
    TempDir dir("rowpump-it-");
    ConfigSpec spec;
    spec.database = "app";
    spec.user = "rowpump";
    spec.queues = {QueueSpec{}};
    const std::string config = write_config(dir.file("rowpump.yaml"), spec);

    // migrate without --apply needs no server.
    RunResult before = rowpump_cli({"--log-level", "warn", "migrate", "-c", config});
    INFO(before.describe());
    CHECK(before.status.success());
    RunResult after = rowpump_cli({"migrate", "-c", config, "--log-level", "warn"});
    INFO(after.describe());
    CHECK(after.status.success());
    CHECK(after.out == before.out);
}
