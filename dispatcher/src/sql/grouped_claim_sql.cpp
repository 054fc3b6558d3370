// The statements of the fair claim across keys (group_by; docs/fairness.md): the key ring's
// listing, the claim over several keys at once, and the tasks in flight per key.

#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

void QueueSql::build_grouped() {
    const std::string key = quote_identifier(queue_.group_by);
    // The keys one index dive each, whatever the statistics and the statement form: the
    // smallest key, then the smallest after the last one, the value bound as a parameter
    // (MariaDB plans each execution with it: "Select tables optimized away"). A GROUP BY
    // listing is planned by the optimizer, and with few keys and stale statistics, or
    // prepared, MariaDB 10.11 ran it as a full scan of the key's index (0.2 to 0.6 s at 1M
    // rows, examined 1M rows) instead of the loose scan. MIN() passes over NULL: the NULL
    // key is found by a dive of its own.
    null_key_ = "SELECT 1 FROM " + table_ + " WHERE " + key + " IS NULL LIMIT 1";
    first_key_ = "SELECT MIN(" + key + ") FROM " + table_;
    key_after_ = "SELECT MIN(" + key + ") FROM " + table_ + " WHERE " + key + " > ?";
    // In flight: the lease runs and the outcome has not been applied (an applied outcome
    // leaves the settled token; a retry's backoff also runs the lease, with that token).
    // Through the lease index, named: for the GROUP BY the optimizer would rather walk the
    // key's index over every row of the table (12 s at 1M rows, measured).
    in_flight_by_key_ = "SELECT " + key + ", COUNT(*) FROM " + table_ + " FORCE INDEX (" +
                        quote_identifier(queue_.columns.lease_index) + ") WHERE " + lease_ +
                        " > UTC_TIMESTAMP(3) AND " + dead_ + " IS NULL AND SUBSTRING(" + token_ +
                        ", " + std::to_string(kSettledMarkAt) + ", 1) <> '" + kSettledMark +
                        "'\nGROUP BY " + key;
}

std::string QueueSql::grouped_claim(std::size_t from_cursor, std::size_t from_first,
                                    const std::string& key_index) const {
    const std::string key = quote_identifier(queue_.group_by);
    const std::string order =
        queue_.order_by.empty() ? "" : "\n    ORDER BY " + format_order_by(queue_.order_by);
    // Each key's rows through the index that starts with the key column, each read stopping
    // at its own limit: a key with a million due rows costs its limit, not its backlog.
    // `<=>`: a NULL key is a key too. With order_by, a key's read goes on from its cursor, so
    // its rows in flight at the head of its order are not read again by every claim; the
    // cursor is part of the index range (a condition such as `? IS NULL OR col >= ?` would
    // not be: MariaDB reads such a key from its first row). And the index is named: left to
    // itself, MariaDB 10.11 plans `key <=> ?` as `ref` on the key column alone whenever it
    // estimates the key's rows past the cursor at no fewer than its rows per key (a noisy
    // key), and `ref` walks the key from its first row: every done row behind the cursor,
    // each claim (490,000 rows for 1,000 taken, measured). Through the named index the read
    // is a range on (key, cursor) that starts at the cursor.
    const std::string through =
        key_index.empty() ? "" : " FORCE INDEX (" + quote_identifier(key_index) + ")";
    const auto branch = [&](bool cursor) {
        std::string from;
        if (cursor && !queue_.order_by.empty()) {
            const auto& first = queue_.order_by.front();
            from = "\n      AND " + quote_identifier(first.column) +
                   (first.descending ? " <= ?" : " >= ?");
        }
        return "(SELECT " + id_ + " FROM " + table_ + through + "\n    WHERE " + key +
               " <=> ? AND " + claimable_within_ + from + order +
               "\n    LIMIT ? FOR UPDATE SKIP LOCKED)";
    };
    std::string branches;
    for (std::size_t i = 0; i < from_cursor + from_first; ++i) {
        branches += (i == 0 ? "\n  " : "\n  UNION ALL ") + branch(i < from_cursor);
    }
    return "UPDATE " + table_ + " AS `t` JOIN (" + branches + ") AS `_rp_claim`\n  ON `t`." + id_ +
           " = `_rp_claim`." + id_ + "\nSET `t`." + token_ + " = CONCAT(?, `t`." + attempts_ +
           " + 1, '-', " + id_checksum("`t`") + "),\n    `t`." + lease_ + " = ?";
}

}  // namespace rowpump
