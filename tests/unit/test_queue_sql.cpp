#include <catch2/catch.hpp>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace {

// A queue body without a claim: key gets claim: mysql, the mode these statements were written
// for (the dispatcher's default is redis).
rowpump::Config load(std::string queue_body) {
    if (queue_body.find("claim:") == std::string::npos) queue_body += "    claim: mysql\n";
    return rowpump::parse_config("mysql: {user: u, database: d}\nqueues:\n  q:\n" + queue_body,
                                 "t.yaml");
}

// The claimable condition of a queue whose due is "state = 'new'", as the statements spell it.
const std::string kNewClaimable =
    "(state = 'new')\n"
    "  AND `rp_dead_at` IS NULL AND (`rp_lease_until` IS NULL OR `rp_lease_until` <= "
    "UTC_TIMESTAMP(3))";

// The rows an outcome may change with claim: redis, due or not (QueueSql::fence).
const std::string kApplicable =
    "`rp_dead_at` IS NULL AND (`rp_lease_until` IS NULL OR `rp_lease_until` <= "
    "UTC_TIMESTAMP(3))";

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("claim stamps per-row tokens and a lease from the database clock", "[queue_sql]") {
    auto config = load(
        "    table: jobs\n    id: job_id\n    due: \"state = 'new'\"\n    order_by: created_at "
        "DESC\n");
    rowpump::QueueSql sql(config.queues.at(0));
    CHECK(
        sql.claim() ==
        "UPDATE `jobs` AS `t` JOIN (\n"
        "  SELECT `job_id` FROM `jobs`\n"
        "  WHERE (state = 'new')\n"
        "  AND `rp_dead_at` IS NULL AND (`rp_lease_until` IS NULL OR `rp_lease_until` <= "
        "UTC_TIMESTAMP(3) AND `rp_lease_until` <= ?)\n"
        "ORDER BY `created_at` DESC\n"
        "  LIMIT ? FOR UPDATE SKIP LOCKED) AS `_rp_claim`\n"
        "  ON `t`.`job_id` = `_rp_claim`.`job_id`\n"
        "SET `t`.`rp_token` = CONCAT(?, `t`.`rp_attempts` + 1, '-', LPAD(HEX(CRC32(`t`.`job_id`)), "
        "8, '0')),\n"
        "    `t`.`rp_lease_until` = ?");
    CHECK(count(sql.claim_from(), "?") == 5);
    CHECK(sql.claim_from().find("AND `created_at` <= ?\nORDER BY") != std::string::npos);
    CHECK(sql.passed_over() ==
          "SELECT `job_id` FROM `jobs`\n"
          "WHERE (state = 'new')\n"
          "  AND `rp_dead_at` IS NULL AND (`rp_lease_until` IS NULL OR `rp_lease_until` <= "
          "UTC_TIMESTAMP(3) AND `rp_lease_until` <= ?)\n"
          "ORDER BY `created_at` DESC\n"
          "LIMIT ?");
    CHECK(sql.read_back() ==
          "SELECT `job_id`, `rp_token`, NULL, `created_at` FROM `jobs` WHERE `rp_lease_until` = ? "
          "AND "
          "`rp_token` >= ? AND `rp_token` < ?\n"
          "ORDER BY `created_at` DESC");
    CHECK(sql.claim_plan() ==
          "SELECT CAST(UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND AS DATETIME(3)),\n"
          "  EXISTS (SELECT 1 FROM `jobs` WHERE `rp_lease_until` <= UTC_TIMESTAMP(3) AND (state = "
          "'new')\n"
          "  AND `rp_dead_at` IS NULL)");
}

TEST_CASE("without order_by there is no sweep cursor", "[queue_sql]") {
    auto config = load("    table: jobs\n    id: id\n    due: \"1\"\n");
    rowpump::QueueSql sql(config.queues.at(0));
    CHECK(sql.claim_from().empty());
    CHECK(sql.claim().find("ORDER BY") == std::string::npos);
}

TEST_CASE("configured column names are used everywhere", "[queue_sql]") {
    auto config = load(
        "    table: t\n    id: id\n    due: \"1\"\n"
        "    columns: {token: tk, lease: ls, attempts: at, error: er, dead: dd, lease_index: "
        "ls_i}\n");
    rowpump::QueueSql sql(config.queues.at(0));
    const auto mariadb = rowpump::Dialect::mariadb();
    for (const auto& text :
         {sql.claim(), sql.claim_expired(), sql.passed_over(), sql.read_back(), sql.release(),
          sql.success(1), sql.retry(1), sql.dead(1), sql.add_lease_index(mariadb)}) {
        CHECK(text.find("`rp_") == std::string::npos);
    }
    std::vector<std::string> columns;
    for (const auto& c : sql.bookkeeping_columns()) columns.push_back(c.name);
    CHECK(columns == std::vector<std::string>{"tk", "ls", "at", "er", "dd"});
    CHECK(sql.add_lease_index(mariadb).find("ADD INDEX IF NOT EXISTS `ls_i` (`ls`)") !=
          std::string::npos);
}

TEST_CASE("success binds named values through the joined rows, guarded by token and id",
          "[queue_sql]") {
    auto config = load(
        "    table: users\n    id: user_id\n    due: \"1\"\n"
        "    on_success: \"status = :status, note = ':status', score = :score + :status\"\n");
    rowpump::QueueSql sql(config.queues.at(0));
    REQUIRE(sql.placeholders() == std::vector<std::string>{"status", "score"});
    const auto text = sql.success(2);
    CHECK(count(text, "?") == 2 * 4);  // token, id, status, score per row
    CHECK(text.find("status = `_rp`.`_rp_status`, note = ':status', score = `_rp`.`_rp_score` + "
                    "`_rp`.`_rp_status`") != std::string::npos);
    CHECK(text.find("ON `t`.`user_id` = `_rp`.`_rp_id` AND `t`.`rp_token` = `_rp`.`_rp_token`") !=
          std::string::npos);
    // The row keeps the settled form of the claim token: '=' for the batch's last hex digit.
    CHECK(text.find("`t`.`rp_token` = INSERT(`_rp`.`_rp_token`, 16, 1, '=')") != std::string::npos);
    CHECK(text.find("`t`.`rp_attempts` = 0") != std::string::npos);
}

TEST_CASE("retry and dead settle the token too; a batch's settled outcomes are counted by id",
          "[queue_sql]") {
    auto config = load("    table: t\n    id: id\n    due: \"1\"\n");
    rowpump::QueueSql sql(config.queues.at(0));
    const std::string settled = "`t`.`rp_token` = INSERT(`_rp`.`_rp_token`, 16, 1, '=')";
    CHECK(sql.retry(1).find(settled) != std::string::npos);
    CHECK(sql.dead(1).find(settled) != std::string::npos);
    const auto count_settled = sql.settled(3);
    CHECK(count(count_settled, "?") == 3 * 2);  // token, id per row
    CHECK(count_settled.find("SELECT COUNT(DISTINCT `t`.`id`)") == 0);
    CHECK(count_settled.find("ON `t`.`id` = `_rp`.`_rp_id` AND " + settled) != std::string::npos);
    // Rows whose lease runs out: claimed ones only, through the lease index.
    CHECK(sql.expiring().find(
              "`rp_lease_until` > ? AND `rp_lease_until` <= UTC_TIMESTAMP(3) + INTERVAL ? "
              "MICROSECOND") != std::string::npos);
    CHECK(sql.expiring().find("SUBSTRING(`rp_token`, 16, 1) <> '='") != std::string::npos);
}

TEST_CASE("retry, dead and extend statements have one row of parameters per outcome",
          "[queue_sql]") {
    auto config =
        load("    table: t\n    id: id\n    due: \"1\"\n    on_dead: \"state = 'failed'\"\n");
    rowpump::QueueSql sql(config.queues.at(0));
    CHECK(count(sql.retry(3), "?") == 3 * 5);
    CHECK(count(sql.dead(3), "?") == 3 * 4);
    CHECK(count(sql.extend(3), "?") == 3 * 3);
    CHECK(sql.dead(1).find("state = 'failed'") != std::string::npos);
    CHECK(sql.retry(1).find("UTC_TIMESTAMP(3) + INTERVAL `_rp`.`_rp_delay` MICROSECOND") !=
          std::string::npos);
    const auto revive = sql.revive(4, std::nullopt);
    for (const auto& text : {revive.reset, revive.count, revive.not_due, revive.finish})
        CHECK(count(text, "?") == 4);
    CHECK(count(sql.revive(0, std::nullopt).reset, "?") == 0);
}

TEST_CASE(
    "retry applies the operator's SET list and counts the rows the due condition is false for",
    "[queue_sql]") {
    auto config = load(
        "    table: jobs\n    id: id\n    due: \"state = 'new'\"\n    on_dead: \"state = "
        "'failed'\"\n");
    rowpump::QueueSql sql(config.queues.at(0));
    std::string error;
    const auto set = rowpump::parse_fragment("state = 'new'", error);
    REQUIRE(set);
    const auto revive = sql.revive(1, set);
    CHECK(revive.reset ==
          "UPDATE `jobs` SET state = 'new', `rp_attempts` = 0, `rp_lease_until` = NULL, `rp_token` "
          "= NULL "
          "WHERE `rp_dead_at` IS NOT NULL AND `id` IN (?)");
    CHECK(revive.count ==
          "SELECT COUNT(*), COALESCE(SUM(NOT COALESCE((state = 'new'), FALSE)), 0) FROM `jobs` "
          "WHERE `rp_dead_at` IS NOT NULL AND `id` IN (?)");
    CHECK(revive.finish ==
          "UPDATE `jobs` SET `rp_dead_at` = NULL WHERE `rp_dead_at` IS NOT NULL AND `id` IN (?)");
}

TEST_CASE("expired leases and retries are claimed through the lease index, oldest first",
          "[queue_sql]") {
    auto config =
        load("    table: jobs\n    id: id\n    due: \"state = 'new'\"\n    order_by: created_at\n");
    rowpump::QueueSql sql(config.queues.at(0));
    CHECK(sql.claim_expired() ==
          "UPDATE `jobs` AS `t` JOIN (\n"
          "  SELECT `id` FROM `jobs`\n"
          "  WHERE `rp_lease_until` <= UTC_TIMESTAMP(3) AND (state = 'new')\n"
          "  AND `rp_dead_at` IS NULL\n"
          "  AND `rp_lease_until` <= ?\n"
          "ORDER BY `rp_lease_until`\n"
          "  LIMIT ? FOR UPDATE SKIP LOCKED) AS `_rp_claim`\n"
          "  ON `t`.`id` = `_rp_claim`.`id`\n"
          "SET `t`.`rp_token` = CONCAT(?, `t`.`rp_attempts` + 1, '-', LPAD(HEX(CRC32(`t`.`id`)), "
          "8, '0')),\n"
          "    `t`.`rp_lease_until` = ?");
    CHECK(sql.add_lease_index(rowpump::Dialect::mariadb())
              .find("ADD INDEX IF NOT EXISTS `rp_lease_idx` (`rp_lease_until`)") !=
          std::string::npos);
}

TEST_CASE("claim: redis scans with a keyset cursor, takes the rows it found, and writes nothing",
          "[queue_sql]") {
    auto config = load(
        "    table: jobs\n    id: job_id\n    due: \"state = 'new'\"\n    order_by: created_at\n"
        "    claim: redis\n");
    rowpump::QueueSql sql(config.queues.at(0));
    const std::string claimable = "WHERE " + kNewClaimable + "\n";
    // The scan reads without locks; lock_scanned() locks through the primary key.
    const std::string head = "SELECT `job_id`, `created_at` FROM `jobs`\n" + claimable;
    CHECK(sql.scan() == head +
                            "ORDER BY `created_at`, `job_id`\n"
                            "LIMIT ?");
    CHECK(sql.scan_from() ==
          head +
              "  AND (`created_at` > ? OR (`created_at` <=> ? AND `job_id` > ?) OR (? IS NULL AND "
              "`created_at` IS NOT NULL))\n"
              "ORDER BY `created_at`, `job_id`\n"
              "LIMIT ?");
    const std::string token =
        "SELECT `job_id`, IFNULL(CRC32(`rp_token`), 0), `rp_attempts`, CRC32(`job_id`), "
        "LEFT(`rp_token`, 8) FROM `jobs`\n";
    CHECK(sql.lock_scanned(3) == token + claimable +
                                     "  AND `job_id` IN (?, ?, ?)\n"
                                     "FOR UPDATE SKIP LOCKED");
    CHECK(
        sql.scan_retried().find("WHERE `rp_lease_until` <= UTC_TIMESTAMP(3) AND (state = 'new')") !=
        std::string::npos);
    CHECK(sql.scan_retried().find("ORDER BY `rp_lease_until`\nLIMIT ? FOR UPDATE SKIP LOCKED") !=
          std::string::npos);

    auto descending = load(
        "    table: jobs\n    id: job_id\n    due: \"1\"\n"
        "    order_by: created_at DESC\n    claim: redis\n");
    rowpump::QueueSql desc(descending.queues.at(0));
    CHECK(desc.scan_from().find("AND (`created_at` < ? OR (`created_at` <=> ? AND `job_id` > ?))\n"
                                "ORDER BY `created_at` DESC, `job_id`\n") != std::string::npos);

    auto plain = load("    table: jobs\n    id: job_id\n    due: \"1\"\n    claim: redis\n");
    rowpump::QueueSql by_id(plain.queues.at(0));
    CHECK(by_id.scan_from().find("  AND `job_id` > ?\nORDER BY `job_id`\nLIMIT ?") !=
          std::string::npos);
    // claim: mysql has no scan.
    rowpump::QueueSql mysql(load("    table: jobs\n    id: job_id\n    due: \"1\"\n").queues.at(0));
    CHECK(mysql.scan().empty());
    CHECK(mysql.lock_scanned(1).empty());
}

TEST_CASE("claim: redis outcomes join on the id and are fenced by the row's version, due or not",
          "[queue_sql]") {
    auto config = load(
        "    table: jobs\n    id: job_id\n    due: \"state = 'new'\"\n"
        "    on_success: \"state = :state\"\n    claim: redis\n");
    rowpump::QueueSql sql(config.queues.at(0));
    const std::string fence =
        "\nWHERE " + kApplicable +
        "\n"
        "  AND LPAD(HEX(CRC32(COALESCE(`t`.`rp_token`, ''))), 8, '0') = "
        "SUBSTRING(`_rp`.`_rp_token`, 9, 8)\n"
        "  AND NOT (`t`.`rp_token` <=> INSERT(`_rp`.`_rp_token`, 16, 1, '='))";
    for (const auto& statement : {sql.success(2), sql.retry(2), sql.dead(2)}) {
        CHECK(statement.find("ON `t`.`job_id` = `_rp`.`_rp_id`\n") != std::string::npos);
        CHECK(statement.size() > fence.size());
        CHECK(statement.substr(statement.size() - fence.size()) == fence);
    }
    // An outcome applied twice is recognised as it is with claims in MySQL.
    CHECK(sql.settled(1).find("AND `t`.`rp_token` = INSERT(`_rp`.`_rp_token`, 16, 1, '=')") !=
          std::string::npos);
}

TEST_CASE("claim: redis applies equal successes of one scan by primary key, fenced alike",
          "[queue_sql]") {
    auto config = load(
        "    table: jobs\n    id: job_id\n    due: \"state = 'new'\"\n"
        "    on_success: \"state = :state, note = CONCAT(:state, :note)\"\n    claim: redis\n");
    rowpump::QueueSql sql(config.queues.at(0));
    // The settled token as settled_token() makes it from the claim token (batch, version,
    // attempt, id), here from the scan batch and the row itself.
    const std::string version = "LPAD(HEX(CRC32(COALESCE(`rp_token`, ''))), 8, '0')";
    const std::string settled =
        "CONCAT(?, LEFT(" + version +
        ", 7), '=-', `rp_attempts` + 1, '-', LPAD(HEX(CRC32(`job_id`)), 8, '0'))";
    CHECK(sql.success_by_id(2) ==
          "UPDATE `jobs` SET state = ?, note = CONCAT(?, ?),\n    `rp_token` = " + settled +
              ", `rp_lease_until` = NULL, `rp_attempts` = 0, `rp_last_error` = NULL\n"
              "WHERE (`job_id`, IFNULL(CRC32(`rp_token`), 0), `rp_attempts`) IN "
              "((?, ?, ?), (?, ?, ?))\n"
              "  AND " +
              kApplicable +
              "\n"
              // Only an outcome of the task's own scan leaves a token that starts with its batch.
              "  AND NOT (LEFT(`rp_token`, 8) <=> ?)");
    // Each placeholder is bound where it occurs.
    CHECK(sql.success_by_id_values() == std::vector<std::string>{"state", "state", "note"});
    rowpump::QueueSql mysql(load("    table: jobs\n    id: job_id\n    due: \"1\"\n").queues.at(0));
    CHECK(mysql.success_by_id(2).empty());
}

TEST_CASE("the claim's read-back says how long each row has been due, given due_since",
          "[queue_sql]") {
    auto config = load(
        "    table: jobs\n    id: job_id\n    due: \"run_at <= NOW()\"\n    due_since: run_at\n");
    rowpump::QueueSql sql(config.queues.at(0));
    CHECK(sql.read_back() ==
          "SELECT `job_id`, `rp_token`, TIMESTAMPDIFF(MICROSECOND, run_at, NOW(3)) FROM `jobs` "
          "WHERE `rp_lease_until` = ? AND `rp_token` >= ? AND `rp_token` < ?");
}

TEST_CASE("rows are locked before they are written, passing over those another transaction holds",
          "[queue_sql]") {
    auto config = load("    table: jobs\n    id: job_id\n    due: \"1\"\n");
    rowpump::QueueSql sql(config.queues.at(0));
    // Positions travel in the token column of the values table; the table is read through its
    // primary key after it (STRAIGHT_JOIN), never scanned.
    CHECK(sql.find_rows(2) ==
          "SELECT `_rp`.`_rp_token` FROM (SELECT NULL AS `_rp_token`, CONCAT(`job_id`) AS "
          "`_rp_id` FROM `jobs` WHERE FALSE\n  UNION ALL SELECT ?, ?\n  UNION ALL SELECT ?, ?) AS "
          "`_rp`\n  STRAIGHT_JOIN `jobs` AS `t` ON `t`.`job_id` = `_rp`.`_rp_id`");
    CHECK(sql.lock_rows(2) == sql.find_rows(2) + "\nFOR UPDATE SKIP LOCKED");
    CHECK(count(sql.lock_rows(5), "?") == 10);
}

TEST_CASE("payload columns are read by the claim's own read, times as ISO 8601 UTC",
          "[queue_sql][payload]") {
    auto config = load(
        "    table: jobs\n    id: job_id\n    due: \"state = 'new'\"\n    order_by: created_at\n"
        "    payload: [url, due_at, seen, owner_id]\n");
    rowpump::QueueSql sql(config.queues.at(0), {{"due_at", rowpump::PayloadKind::datetime},
                                                {"seen", rowpump::PayloadKind::timestamp}});
    const std::string payload =
        ", `url`, CONCAT(LEFT(DATE_FORMAT(CONVERT_TZ(`due_at`, @@global.time_zone, '+00:00'), "
        "'%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z'), CONCAT(LEFT(DATE_FORMAT(TIMESTAMPADD(MICROSECOND, "
        "UNIX_TIMESTAMP(`seen`) * 1000000, CAST('1970-01-01' AS DATETIME(6))), "
        "'%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z'), `owner_id`";
    CHECK(sql.read_back() == "SELECT `job_id`, `rp_token`, NULL, `created_at`" + payload +
                                 " FROM `jobs` WHERE `rp_lease_until` = ? AND `rp_token` >= ? "
                                 "AND `rp_token` < ?\nORDER BY `created_at`");

    auto redis = load(
        "    table: jobs\n    id: job_id\n    due: \"state = 'new'\"\n    claim: redis\n"
        "    payload: [url]\n");
    rowpump::QueueSql scan(redis.queues.at(0));
    CHECK(scan.lock_scanned(1).find("CRC32(`job_id`), LEFT(`rp_token`, 8), `url` FROM `jobs`") !=
          std::string::npos);
    CHECK(scan.scan_retried().find("), `url` FROM `jobs`") != std::string::npos);
    // The claim's other statements are as without a payload.
    CHECK(scan.scan().find("`url`") == std::string::npos);
    CHECK(scan.read_back().find("`url`") != std::string::npos);
}

TEST_CASE("a grouped claim reads each key through the named key index, from its cursor",
          "[queue_sql][group_by]") {
    auto config = load(
        "    table: jobs\n    id: job_id\n    due: \"state = 'new'\"\n    order_by: created_at\n"
        "    group_by: tenant\n");
    rowpump::QueueSql sql(config.queues.at(0));
    const std::string claim = sql.grouped_claim(2, 1, "tenant_created");
    CHECK(count(claim, "FROM `jobs` FORCE INDEX (`tenant_created`)\n    WHERE `tenant` <=> ?") ==
          3);
    CHECK(count(claim, "AND `created_at` >= ?\n    ORDER BY `created_at`") == 2);
    CHECK(count(claim, "?") == 2 * 4 + 3 + 2);
    // Without an index found, the optimizer chooses, as before.
    CHECK(sql.grouped_claim(1, 1).find("FORCE INDEX") == std::string::npos);
}
