#include <catch2/catch.hpp>

#include "rowpump/dispatcher/config.hpp"
#include "rowpump/dispatcher/queue_sql.hpp"

namespace {

rowpump::Config load(const std::string& queue_body) {
    return rowpump::parse_config("mysql: {user: u, database: d}\nqueues:\n  q:\n" + queue_body, "t.yaml");
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("claim stamps per-row tokens and a lease from the database clock", "[queue_sql]") {
    auto config = load("    table: jobs\n    id: job_id\n    due: \"state = 'new'\"\n    order_by: created_at DESC\n");
    rowpump::QueueSql sql(config.queues.at(0));
    CHECK(sql.claim() ==
          "UPDATE `jobs`\n"
          "SET `rp_token` = CONCAT(?, `rp_attempts` + 1, '-', HEX(`job_id`)),\n"
          "    `rp_lease_until` = ?\n"
          "WHERE (state = 'new')\n"
          "  AND `rp_dead_at` IS NULL AND (`rp_lease_until` IS NULL OR `rp_lease_until` <= NOW(3))\n"
          "ORDER BY `created_at` DESC\n"
          "LIMIT ?");
    CHECK(count(sql.claim_from(), "?") == 4);
    CHECK(sql.claim_from().find("AND `created_at` <= ?\nORDER BY") != std::string::npos);
    CHECK(sql.read_back() ==
          "SELECT `job_id`, `rp_token`, `created_at` FROM `jobs` WHERE `rp_lease_until` = ? AND "
          "`rp_token` >= ? AND `rp_token` < ?\n"
          "ORDER BY `created_at` DESC");
    CHECK(sql.claim_plan() ==
          "SELECT CAST(NOW(3) + INTERVAL ? MICROSECOND AS DATETIME(3)),\n"
          "  EXISTS (SELECT 1 FROM `jobs` WHERE `rp_lease_until` <= NOW(3) AND (state = 'new')\n"
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
        "    columns: {token: tk, lease: ls, attempts: at, error: er, dead: dd, lease_index: ls_i}\n");
    rowpump::QueueSql sql(config.queues.at(0));
    for (const auto& text :
         {sql.claim(), sql.claim_expired(), sql.read_back(), sql.release(), sql.success(1), sql.retry(1),
          sql.dead(1), sql.migrate().at(0)}) {
        CHECK(text.find("`rp_") == std::string::npos);
    }
    CHECK(sql.migrate().at(0).find("ADD INDEX IF NOT EXISTS `ls_i` (`ls`)") != std::string::npos);
}

TEST_CASE("success binds named values through the joined rows, guarded by token and id", "[queue_sql]") {
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
    CHECK(text.find("`t`.`rp_token` = NULL") != std::string::npos);
    CHECK(text.find("`t`.`rp_attempts` = 0") != std::string::npos);
}

TEST_CASE("retry, dead and extend statements have one row of parameters per outcome", "[queue_sql]") {
    auto config = load("    table: t\n    id: id\n    due: \"1\"\n    on_dead: \"state = 'failed'\"\n");
    rowpump::QueueSql sql(config.queues.at(0));
    CHECK(count(sql.retry(3), "?") == 3 * 5);
    CHECK(count(sql.dead(3), "?") == 3 * 4);
    CHECK(count(sql.extend(3), "?") == 3 * 3);
    CHECK(sql.dead(1).find("state = 'failed'") != std::string::npos);
    CHECK(sql.retry(1).find("NOW(3) + INTERVAL `_rp`.`_rp_delay` MICROSECOND") != std::string::npos);
    CHECK(count(sql.revive_ids(4), "?") == 4);
}

TEST_CASE("expired leases and retries are claimed through the lease index, oldest first", "[queue_sql]") {
    auto config = load("    table: jobs\n    id: id\n    due: \"state = 'new'\"\n    order_by: created_at\n");
    rowpump::QueueSql sql(config.queues.at(0));
    CHECK(sql.claim_expired() ==
          "UPDATE `jobs`\n"
          "SET `rp_token` = CONCAT(?, `rp_attempts` + 1, '-', HEX(`id`)),\n"
          "    `rp_lease_until` = ?\n"
          "WHERE `rp_lease_until` <= NOW(3) AND (state = 'new')\n"
          "  AND `rp_dead_at` IS NULL\n"
          "ORDER BY `rp_lease_until`\n"
          "LIMIT ?");
    CHECK(sql.migrate().at(0).find("ADD INDEX IF NOT EXISTS `rp_lease_idx` (`rp_lease_until`)") !=
          std::string::npos);
}
