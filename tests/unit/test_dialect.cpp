// The statements MariaDB and MySQL 8 spell differently, as text: the MariaDB texts also run in
// the integration tests (migrate, status, check); the MySQL 8 texts run against no server
// here, so these tests pin what they say.

#include <catch2/catch.hpp>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/sql/dialect.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace {

using Catch::Matchers::Contains;
using rowpump::Dialect;
using namespace std::chrono_literals;

// A queue body without a claim: key gets claim: mysql, the mode these statements were written
// for (the dispatcher's default is redis).
rowpump::Config load(std::string queue_body) {
    if (queue_body.find("claim:") == std::string::npos) queue_body += "    claim: mysql\n";
    return rowpump::parse_config("mysql: {user: u, database: d}\nqueues:\n  q:\n" + queue_body,
                                 "t.yaml");
}

const Dialect kMysql = Dialect::from_version("8.0.36");

}  // namespace

TEST_CASE("the server's kind and version come from VERSION()", "[dialect]") {
    for (const auto* version : {"10.11.6-MariaDB-0+deb12u1", "10.6.18-MariaDB",
                                "11.4.2-MariaDB-log", "5.5.5-10.11.6-MariaDB"}) {
        INFO(version);
        const auto d = Dialect::from_version(version);
        CHECK(d.is_mariadb());
        CHECK_THAT(d.name(), Catch::StartsWith("MariaDB 1"));
    }
    CHECK(Dialect::from_version("10.11.6-MariaDB-0+deb12u1").name() == "MariaDB 10.11.6");
    for (const auto* version : {"8.0.36", "8.0.36-0ubuntu0.22.04.1", "8.4.2-log", "9.1.0"}) {
        INFO(version);
        CHECK_FALSE(Dialect::from_version(version).is_mariadb());
    }
    CHECK(Dialect::from_version("8.4.2-log").name() == "MySQL 8.4.2");
}

TEST_CASE("a server without SKIP LOCKED, or an unreadable VERSION(), is refused by name",
          "[dialect]") {
    CHECK_THROWS_WITH(Dialect::from_version("5.7.44-log"),
                      "the server is MySQL 5.7.44; rowpump needs MySQL 8.0 or later (SKIP LOCKED)");
    CHECK_THROWS_WITH(
        Dialect::from_version("10.5.23-MariaDB"),
        "the server is MariaDB 10.5.23; rowpump needs MariaDB 10.6 or later (SKIP LOCKED)");
    CHECK_THROWS_AS(Dialect::from_version(""), rowpump::UnsupportedServer);
    CHECK_THROWS_AS(Dialect::from_version("8"), rowpump::UnsupportedServer);
    CHECK_THROWS_AS(Dialect::from_version("8.x"), rowpump::UnsupportedServer);
    CHECK(Dialect::from_version("99999999999999999999.0").name() == "MySQL 99999999999999999999.0");
    CHECK_THROWS_WITH(Dialect::from_version("TiDB\n\x1b[31m"),
                      Contains("VERSION() 'TiDB\\n\\x1B[31m'") && Contains("MySQL 8.0+"));
}

TEST_CASE("the due count gives up after due_count.timeout in each dialect", "[dialect]") {
    const auto config = load("    table: jobs\n    id: id\n    due: \"state = 'new'\"\n");
    const rowpump::QueueSql sql(config.queues.at(0));
    const std::string count =
        " COUNT(*), TIMESTAMPDIFF(MICROSECOND, MIN(`s`), NOW(3)) FROM (SELECT NULL AS `s` FROM "
        "`jobs`\nWHERE (state = 'new')\n  AND `rp_dead_at` IS NULL AND (`rp_lease_until` IS NULL "
        "OR `rp_lease_until` <= UTC_TIMESTAMP(3))\nLIMIT 1001) AS `due`";
    CHECK(sql.count_due(1000, 2500ms, Dialect::mariadb()) ==
          "SET STATEMENT max_statement_time = 2.500 FOR\nSELECT" + count);
    CHECK(sql.count_due(1000, 2500ms, kMysql) == "SELECT /*+ MAX_EXECUTION_TIME(2500) */" + count);
    // MAX_EXECUTION_TIME(0) would mean no limit at all.
    CHECK_THAT(sql.count_due(1000, 0ms, kMysql), Contains("MAX_EXECUTION_TIME(1) */"));
    CHECK(Dialect::mariadb().statement_timeout_error() == 1969);
    CHECK(kMysql.statement_timeout_error() == 3024);
}

TEST_CASE("outcome writes fail at once on a locked row on MariaDB; MySQL has no such statement",
          "[dialect]") {
    CHECK(Dialect::mariadb().without_lock_wait("UPDATE `jobs` SET `a` = 1") ==
          "SET STATEMENT innodb_lock_wait_timeout = 0 FOR\nUPDATE `jobs` SET `a` = 1");
    CHECK(kMysql.without_lock_wait("UPDATE `jobs` SET `a` = 1").empty());
}

TEST_CASE("migrate's columns: IF NOT EXISTS on MariaDB, only the missing ones on MySQL 8",
          "[dialect]") {
    const auto config = load("    table: jobs\n    id: id\n    due: \"1\"\n");
    const rowpump::QueueSql sql(config.queues.at(0));
    const auto columns = sql.bookkeeping_columns();
    CHECK(Dialect::mariadb().add_columns("jobs", columns) ==
          "ALTER TABLE `jobs`\n"
          "  ADD COLUMN IF NOT EXISTS `rp_token` VARCHAR(80) CHARACTER SET ascii COLLATE "
          "ascii_bin NULL,\n"
          "  ADD COLUMN IF NOT EXISTS `rp_lease_until` DATETIME(3) NULL,\n"
          "  ADD COLUMN IF NOT EXISTS `rp_attempts` INT UNSIGNED NOT NULL DEFAULT 0,\n"
          "  ADD COLUMN IF NOT EXISTS `rp_last_error` VARCHAR(1024) CHARACTER SET utf8mb4 NULL,\n"
          "  ADD COLUMN IF NOT EXISTS `rp_dead_at` DATETIME(3) NULL,\n"
          "  ALGORITHM=INSTANT, LOCK=NONE");
    // MySQL takes no LOCK clause with INSTANT, and no IF NOT EXISTS: the plan passes only the
    // columns information_schema.COLUMNS lacks.
    CHECK(kMysql.add_columns("jobs", {columns.at(1), columns.at(4)}) ==
          "ALTER TABLE `jobs`\n"
          "  ADD COLUMN `rp_lease_until` DATETIME(3) NULL,\n"
          "  ADD COLUMN `rp_dead_at` DATETIME(3) NULL,\n"
          "  ALGORITHM=INSTANT");
}

TEST_CASE("migrate's lease index: NOCOPY on MariaDB, INPLACE on MySQL 8, never a lock",
          "[dialect]") {
    const auto config = load("    table: jobs\n    id: id\n    due: \"1\"\n");
    const rowpump::QueueSql sql(config.queues.at(0));
    CHECK(sql.add_lease_index(Dialect::mariadb()) ==
          "ALTER TABLE `jobs`\n  ADD INDEX IF NOT EXISTS `rp_lease_idx` (`rp_lease_until`),\n"
          "  ALGORITHM=NOCOPY, LOCK=NONE");
    CHECK(sql.add_lease_index(kMysql) ==
          "ALTER TABLE `jobs`\n  ADD INDEX `rp_lease_idx` (`rp_lease_until`),\n"
          "  ALGORITHM=INPLACE, LOCK=NONE");
}

TEST_CASE("migrate's progress: PROCESSLIST stages on MariaDB, performance_schema on MySQL 8",
          "[dialect]") {
    const auto mariadb = Dialect::mariadb().ddl_progress();
    CHECK_THAT(mariadb, Contains("STAGE, ' of ', MAX_STAGE") && Contains("PROGRESS") &&
                            Contains("FROM information_schema.PROCESSLIST WHERE ID = ?"));
    CHECK(mariadb.find("performance_schema") == std::string::npos);
    const auto mysql = kMysql.ddl_progress();
    CHECK_THAT(mysql, Contains("performance_schema.threads t ON t.PROCESSLIST_ID = p.ID") &&
                          Contains("performance_schema.events_stages_current s ON s.THREAD_ID = "
                                   "t.THREAD_ID") &&
                          Contains("WORK_COMPLETED / NULLIF(s.WORK_ESTIMATED, 0)") &&
                          Contains("WHERE p.ID = ?"));
    CHECK(mysql.find("MAX_STAGE") == std::string::npos);
}
