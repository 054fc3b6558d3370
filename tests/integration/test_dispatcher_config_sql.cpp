// Config that cannot escape its place, against a real MariaDB: `check` prepares every
// statement `run` will use (the outcome statements too) and names the key whose SQL MySQL
// refuses, `run` refuses to start on the same, and `check` verifies the bookkeeping columns'
// types.

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/seed.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;
using Catch::Matchers::Contains;

namespace {

// "PATH:LINE: KEY", LINE being where `key:` is written in the config at `path`.
std::string where(const std::string& path, const std::string& key) {
    const std::string text = read_file(path);
    const std::string leaf = key.substr(key.rfind('.') + 1) + ":";
    const auto at = text.find("    " + leaf);
    REQUIRE(at != std::string::npos);
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    return path + ":" + std::to_string(line) + ": " + key;
}

// `rowpump check` with `queue`, on a migrated table of 10 users; `config` receives the path.
RunResult check_with(const TestBed& bed, const QueueSpec& queue, std::string& config) {
    MysqlClient db = bed.db();
    seed_user_block_status(db, 10);
    config = bed.write_config({queue});
    migrate_apply(config);
    return rowpump_cli({"check", "-c", config});
}

}  // namespace

TEST_CASE("check and run refuse an outcome statement MySQL does not take, naming its key",
          "[dispatcher]") {
    TestBed bed;
    QueueSpec queue;
    // Found by a config fuzz: passed `check`, then every outcome batch failed with 1064.
    queue.on_success = "status = :status WHERE 1=1";
    queue.on_dead = "no_such_column = 3";
    std::string config;
    RunResult check = check_with(bed, queue, config);
    INFO(check.describe());
    CHECK(check.status.describe() == "exit code 1");
    CHECK_THAT(check.err, Contains(where(config, "queues.users.on_success") +
                                   ": MySQL refuses the success outcome statement: MySQL error "
                                   "1064"));
    CHECK_THAT(check.err, Contains(where(config, "queues.users.on_dead") +
                                   ": MySQL refuses the dead outcome statement: MySQL error 1054"));
    CHECK_THAT(check.err, Contains("no_such_column"));

    RunResult run = rowpump_cli({"run", "-c", config}, 20s);
    INFO(run.describe());
    CHECK(run.status.describe() == "exit code 2");
    CHECK_THAT(run.err, Contains(where(config, "queues.users.on_success")));
    CHECK_THAT(run.err, Contains(where(config, "queues.users.on_dead")));
    // It never claimed anything.
    CHECK(bed.db().scalar("SELECT COUNT(*) FROM user_block_status WHERE rp_token IS NOT NULL") ==
          0);
}

TEST_CASE("check names a due condition or order_by that MySQL does not take", "[dispatcher]") {
    TestBed bed;
    QueueSpec queue;
    queue.due = "updated_tim < NOW(3)";
    queue.order_by = "no_such_order";
    std::string config;
    RunResult check = check_with(bed, queue, config);
    INFO(check.describe());
    CHECK(check.status.describe() == "exit code 1");
    CHECK_THAT(check.err, Contains(where(config, "queues.users.due") +
                                   ": MySQL refuses the due condition: MySQL error 1054"));
    CHECK_THAT(check.err, Contains(where(config, "queues.users.order_by") +
                                   ": MySQL refuses the order_by: MySQL error 1054"));
}

TEST_CASE("check verifies the type of each bookkeeping column", "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, 10);
    // Columns that exist under the right names but with types rowpump cannot rely on: a
    // lease without milliseconds loses every batch's read-back, a latin1 error column refuses
    // reasons in other scripts.
    db.exec(
        "ALTER TABLE user_block_status ADD COLUMN rp_token INT NULL, "
        "ADD COLUMN rp_lease_until DATETIME NULL, ADD COLUMN rp_attempts VARCHAR(10) NOT NULL "
        "DEFAULT '0', ADD COLUMN rp_last_error VARCHAR(255) CHARACTER SET latin1 NULL, "
        "ADD COLUMN rp_dead_at INT NULL, ADD INDEX rp_lease_idx (rp_lease_until)");
    const std::string config = bed.write_config();

    RunResult check = rowpump_cli({"check", "-c", config});
    INFO(check.describe());
    CHECK(check.status.describe() == "exit code 1");
    const std::string at = config + ":";
    CHECK_THAT(check.err, Contains(": queues.users.columns.token: column 'rp_token' is int(11); "
                                   "expected VARCHAR(80)"));
    CHECK_THAT(check.err, Contains(": queues.users.columns.lease: column 'rp_lease_until' is "
                                   "datetime; expected DATETIME(3)"));
    CHECK_THAT(check.err, Contains(": queues.users.columns.attempts: column 'rp_attempts' is "
                                   "varchar(10) utf8mb4; expected INT UNSIGNED"));
    CHECK_THAT(check.err, Contains(": queues.users.columns.error: column 'rp_last_error' is "
                                   "varchar(255) latin1; expected VARCHAR(1024) CHARACTER SET "
                                   "utf8mb4"));
    CHECK_THAT(check.err, Contains(": queues.users.columns.dead: column 'rp_dead_at' is int(11); "
                                   "expected DATETIME(3)"));
    CHECK_THAT(check.err, Contains(at));

    // What migrate adds passes.
    db.exec(
        "ALTER TABLE user_block_status DROP COLUMN rp_token, DROP COLUMN rp_lease_until, DROP "
        "COLUMN rp_attempts, DROP COLUMN rp_last_error, DROP COLUMN rp_dead_at");
    migrate_apply(config);
    RunResult fixed = rowpump_cli({"check", "-c", config});
    INFO(fixed.describe());
    CHECK(fixed.status.describe() == "exit code 0");
}

// group_by: `check` prepares the grouped claim statements against the table (a key column the
// table lacks is refused, naming the key), and warns, naming the index to add, when no index
// starts with the key column.
TEST_CASE("check prepares the grouped claim and gives index advice for group_by",
          "[dispatcher][group_by]") {
    TestBed bed;
    QueueSpec queue;
    queue.extra_lines = {"group_by: status"};
    std::string config;
    RunResult check = check_with(bed, queue, config);
    INFO(check.describe());
    CHECK(check.status.describe() == "exit code 0");
    CHECK_THAT(check.out, Contains("UNION ALL"));
    CHECK_THAT(check.err,
               Contains("queue users: warning: no index starts with the group_by column 'status': "
                        "every claim would read the whole table; add one, e.g. ALTER TABLE "
                        "`user_block_status` ADD INDEX (`status`, `updated_time`)"));

    bed.db().exec("ALTER TABLE user_block_status ADD INDEX (status, updated_time)");
    RunResult indexed = rowpump_cli({"check", "-c", config});
    INFO(indexed.describe());
    CHECK(indexed.status.describe() == "exit code 0");
    CHECK_THAT(indexed.err, !Contains("group_by"));

    queue.extra_lines = {"group_by: no_such_column"};
    const auto missing = bed.write_config({queue}, "missing.yaml");
    RunResult refused = rowpump_cli({"check", "-c", missing});
    INFO(refused.describe());
    CHECK(refused.status.describe() == "exit code 1");
    CHECK_THAT(refused.err, Contains("no_such_column"));
}
