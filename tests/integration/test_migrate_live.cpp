// `rowpump migrate` on a table in use: the plan, separate statements that neither copy nor
// lock the table, a short lock wait that names who holds the table, Ctrl-C that cancels
// the statement on the server.

#include <csignal>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/seed.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

std::int64_t bookkeeping_columns(MysqlClient& db) {
    return db.scalar(
        "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
        "AND TABLE_NAME = 'user_block_status' AND COLUMN_NAME LIKE 'rp\\_%'");
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// A table in use: `app` is a session of the application in a transaction that has read
// from the table and is still open, so it holds the table's metadata lock.
struct TableInUse {
    TestBed bed;
    MysqlClient db = bed.db();
    std::string config;
    MysqlClient app = bed.db();
    std::int64_t holder = 0;  // app's connection id

    TableInUse() {
        seed_user_block_status(db, 100);
        config = bed.write_config();
        app.exec("START TRANSACTION");
        app.scalar("SELECT COUNT(*) FROM user_block_status WHERE user_id < 10");
        holder = app.scalar("SELECT CONNECTION_ID()");
    }
};

}  // namespace

TEST_CASE("rowpump migrate prints a plan: table size, columns INSTANT, index NOCOPY without a lock",
          "[dispatcher][migrate]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 2000);
    const std::string config = bed.write_config();

    RunResult plan = rowpump_cli({"migrate", "-c", config});
    INFO(plan.describe());
    REQUIRE(plan.status.success());
    CHECK(contains(plan.out, "table user_block_status, ~"));
    CHECK(contains(plan.out, "\n-- server: MariaDB 10."));
    CHECK(contains(plan.out, " rows, "));
    CHECK(contains(plan.out, "ADD COLUMN IF NOT EXISTS `rp_token`"));
    CHECK(contains(plan.out, "ALGORITHM=INSTANT, LOCK=NONE;"));
    CHECK(contains(plan.out,
                   "ADD INDEX IF NOT EXISTS `rp_lease_idx` (`rp_lease_until`),\n  "
                   "ALGORITHM=NOCOPY, LOCK=NONE;"));
    CHECK(bookkeeping_columns(db) == 0);

    RunResult applied = rowpump_cli({"migrate", "-c", config, "--apply"});
    INFO(applied.describe());
    REQUIRE(applied.status.success());
    CHECK(contains(applied.out, "-- applied in "));
    CHECK(bookkeeping_columns(db) == 5);

    RunResult again = rowpump_cli({"migrate", "-c", config, "--apply"});
    INFO(again.describe());
    CHECK(again.status.success());
    CHECK(contains(again.out, "add the bookkeeping columns: already done, skipped"));
    CHECK(contains(again.out, "add the lease index: already done, skipped"));
    CHECK_FALSE(contains(again.out, "-- applied"));
}

TEST_CASE("rowpump migrate adds only the bookkeeping columns the table lacks",
          "[dispatcher][migrate]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 10);
    db.exec(
        "ALTER TABLE user_block_status ADD COLUMN rp_token VARCHAR(80) NULL, "
        "ADD COLUMN rp_attempts INT UNSIGNED NOT NULL DEFAULT 0");
    const std::string config = bed.write_config();

    RunResult plan = rowpump_cli({"migrate", "-c", config});
    INFO(plan.describe());
    REQUIRE(plan.status.success());
    CHECK(contains(plan.out, "ADD COLUMN IF NOT EXISTS `rp_lease_until` DATETIME(3) NULL,"));
    CHECK(contains(plan.out, "ADD COLUMN IF NOT EXISTS `rp_dead_at` DATETIME(3) NULL,"));
    CHECK_FALSE(contains(plan.out, "`rp_token`"));
    CHECK_FALSE(contains(plan.out, "`rp_attempts`"));

    RunResult applied = rowpump_cli({"migrate", "-c", config, "--apply"});
    INFO(applied.describe());
    REQUIRE(applied.status.success());
    CHECK(bookkeeping_columns(db) == 5);
}

TEST_CASE("an open transaction on the table: migrate gives up after --lock-wait and names it",
          "[dispatcher][migrate]") {
    TableInUse table;
    auto& db = table.db;
    auto& app = table.app;
    const auto& config = table.config;
    const auto holder = table.holder;

    RunResult r = rowpump_cli({"migrate", "-c", config, "--apply", "--lock-wait", "1s"});
    INFO(r.describe());
    CHECK(r.status.exited());
    CHECK(r.status.code() == 1);
    CHECK(contains(r.err,
                   "the table stayed locked longer than --lock-wait (1 s); nothing was changed"));
    CHECK(contains(r.err, "connection " + std::to_string(holder) + " (rowpump@"));
    CHECK(contains(r.err, "KILL " + std::to_string(holder)));
    CHECK(bookkeeping_columns(db) == 0);

    app.exec("COMMIT");
    RunResult after = rowpump_cli({"migrate", "-c", config, "--apply", "--lock-wait", "1s"});
    INFO(after.describe());
    CHECK(after.status.success());
    CHECK(bookkeeping_columns(db) == 5);
}

TEST_CASE("Ctrl-C cancels the ALTER on the server, not only the client", "[dispatcher][migrate]") {
    TableInUse table;
    auto& db = table.db;
    auto& app = table.app;
    const auto& config = table.config;

    const std::string output = table.bed.dir.file("migrate.out");
    ChildProcess migrate({rowpump_exe(), "migrate", "-c", config, "--apply", "--lock-wait", "5m"},
                         {{}, output, "", ""});
    auto alter_waiting = [&db] {
        return db.scalar(
                   "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'ALTER "
                   "TABLE%' "
                   "AND STATE = 'Waiting for table metadata lock'") == 1;
    };
    REQUIRE(eventually(10s, alter_waiting));

    migrate.signal(SIGINT);
    const auto status = migrate.wait(10s);
    INFO(read_file(output));
    REQUIRE(status);
    CHECK(status->exited());
    CHECK(status->code() == 130);
    CHECK(contains(read_file(output), "cancelled after "));
    // Gone from the server too: nothing would add the columns once the transaction ends.
    CHECK(
        db.scalar(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'ALTER TABLE%'") ==
        0);
    app.exec("COMMIT");
    CHECK(bookkeeping_columns(db) == 0);
}
