#include "rowpump/dispatcher/queue_sql.hpp"

namespace rowpump {

namespace {

// Columns of the joined values table get a prefix no user table is likely to use, so that
// unqualified column names in on_success still mean the user's table.
std::string value_column(const std::string& name) { return quote_identifier("_rp_" + name); }

std::string placeholders_list(std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += i == 0 ? "?" : ", ?";
    return out;
}

}  // namespace

QueueSql::QueueSql(const QueueConfig& queue)
    : queue_(queue),
      table_(quote_identifier(queue.table)),
      id_(quote_identifier(queue.id)),
      token_(quote_identifier(queue.columns.token)),
      lease_(quote_identifier(queue.columns.lease)),
      attempts_(quote_identifier(queue.columns.attempts)),
      error_(quote_identifier(queue.columns.error)),
      dead_(quote_identifier(queue.columns.dead)) {
    const std::string claimable = "(" + queue.due.text + ")\n  AND " + dead_ + " IS NULL AND (" +
                                  lease_ + " IS NULL OR " + lease_ + " <= NOW(3))";
    const std::string order =
        queue.order_by.empty() ? "" : "\nORDER BY " + format_order_by(queue.order_by);

    const std::string stamp = "UPDATE " + table_ + "\nSET " + token_ + " = CONCAT(?, " + attempts_ +
                              " + 1, '-', HEX(" + id_ + ")),\n    " + lease_ +
                              " = ?\nWHERE ";
    claim_ = stamp + claimable + order + "\nLIMIT ?";
    const std::string expired = lease_ + " <= NOW(3) AND (" + queue.due.text + ")\n  AND " + dead_ + " IS NULL";
    claim_expired_ = stamp + expired + "\nORDER BY " + lease_ + "\nLIMIT ?";
    std::string cursor_column;
    if (!queue.order_by.empty()) {
        const auto& first = queue.order_by.front();
        cursor_column = ", " + quote_identifier(first.column);
        claim_from_ = stamp + claimable + "\n  AND " + quote_identifier(first.column) + (first.descending ? " <= ?" : " >= ?") +
                      order + "\nLIMIT ?";
    }
    claim_plan_ = "SELECT CAST(NOW(3) + INTERVAL ? MICROSECOND AS DATETIME(3)),\n  EXISTS (SELECT 1 FROM " +
                  table_ + " WHERE " + expired + ")";
    const std::string batch = lease_ + " = ? AND " + token_ + " >= ? AND " + token_ + " < ?";
    read_back_ = "SELECT " + id_ + ", " + token_ + cursor_column + " FROM " + table_ + " WHERE " + batch + order;
    release_ = "UPDATE " + table_ + " SET " + token_ + " = NULL, " + lease_ + " = NULL WHERE " + batch;
    explain_due_ = "EXPLAIN SELECT " + id_ + " FROM " + table_ + "\nWHERE " + claimable + order +
                   "\nLIMIT " + std::to_string(queue.batch);
    count_due_ = "SELECT COUNT(*) FROM " + table_ + " WHERE " + claimable;
    list_dead_ = "SELECT " + id_ + ", " + attempts_ + ", " + error_ + ", " + dead_ + " FROM " + table_ +
                 " WHERE " + dead_ + " IS NOT NULL ORDER BY " + dead_ + " DESC LIMIT ?";
    revive_all_ = "UPDATE " + table_ + " SET " + dead_ + " = NULL, " + attempts_ + " = 0, " + lease_ +
                  " = NULL, " + token_ + " = NULL WHERE " + dead_ + " IS NOT NULL";

    if (queue.on_success) {
        placeholders_ = queue.on_success->placeholders;
        success_set_ = substitute_placeholders(*queue.on_success, [](const std::string& name) {
                           return "`_rp`." + value_column(name);
                       }) +
                       ",\n    ";
    }
}

std::string QueueSql::join_values(std::size_t rows, const std::vector<std::string>& columns) const {
    // (SELECT ? AS a, ? AS b UNION ALL SELECT ?, ? ...) joined on token and id: the id gives
    // the primary-key lookup, the token is the fence.
    std::string first = "SELECT ? AS `_rp_token`, ? AS `_rp_id`";
    for (const auto& c : columns) first += ", ? AS " + value_column(c);
    const std::string more = "\n  UNION ALL SELECT " + placeholders_list(columns.size() + 2);
    std::string derived = first;
    for (std::size_t i = 1; i < rows; ++i) derived += more;
    return "UPDATE " + table_ + " AS `t` JOIN (" + derived + ") AS `_rp`\n  ON `t`." + id_ +
           " = `_rp`.`_rp_id` AND `t`." + token_ + " = `_rp`.`_rp_token`\n";
}

std::string QueueSql::success(std::size_t rows) const {
    return join_values(rows, placeholders_) + "SET " + success_set_ + "`t`." + token_ + " = NULL, `t`." +
           lease_ + " = NULL, `t`." + attempts_ + " = 0, `t`." + error_ + " = NULL";
}

std::string QueueSql::retry(std::size_t rows) const {
    return join_values(rows, {"attempts", "error", "delay"}) + "SET `t`." + token_ + " = NULL, `t`." +
           attempts_ + " = `_rp`.`_rp_attempts`, `t`." + error_ + " = `_rp`.`_rp_error`, `t`." + lease_ +
           " = NOW(3) + INTERVAL `_rp`.`_rp_delay` MICROSECOND";
}

std::string QueueSql::dead(std::size_t rows) const {
    std::string on_dead = queue_.on_dead ? queue_.on_dead->text + ",\n    " : "";
    return join_values(rows, {"attempts", "error"}) + "SET " + on_dead + "`t`." + token_ + " = NULL, `t`." +
           lease_ + " = NULL, `t`." + attempts_ + " = `_rp`.`_rp_attempts`, `t`." + error_ +
           " = `_rp`.`_rp_error`, `t`." + dead_ + " = NOW(3)";
}

std::string QueueSql::extend(std::size_t rows) const {
    return join_values(rows, {"lease"}) + "SET `t`." + lease_ + " = GREATEST(COALESCE(`t`." + lease_ +
           ", NOW(3)), NOW(3) + INTERVAL `_rp`.`_rp_lease` MICROSECOND)";
}

std::string QueueSql::revive_ids(std::size_t ids) const {
    return "UPDATE " + table_ + " SET " + dead_ + " = NULL, " + attempts_ + " = 0, " + lease_ + " = NULL, " +
           token_ + " = NULL WHERE " + dead_ + " IS NOT NULL AND " + id_ + " IN (" + placeholders_list(ids) +
           ")";
}

std::vector<std::string> QueueSql::migrate() const {
    const auto& c = queue_.columns;
    return {"ALTER TABLE " + table_ + "\n  ADD COLUMN IF NOT EXISTS " + token_ +
                " VARCHAR(80) CHARACTER SET ascii COLLATE ascii_bin NULL,\n  ADD COLUMN IF NOT EXISTS " +
                lease_ + " DATETIME(3) NULL,\n  ADD COLUMN IF NOT EXISTS " + attempts_ +
                " INT UNSIGNED NOT NULL DEFAULT 0,\n  ADD COLUMN IF NOT EXISTS " + error_ +
                " VARCHAR(1024) NULL,\n  ADD COLUMN IF NOT EXISTS " + dead_ +
                " DATETIME(3) NULL,\n  ADD INDEX IF NOT EXISTS " + quote_identifier(c.lease_index) + " (" +
                lease_ + ")"};
}

}  // namespace rowpump
