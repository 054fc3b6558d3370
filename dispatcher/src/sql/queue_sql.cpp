#include "rowpump/dispatcher/sql/queue_sql.hpp"

#include <cctype>

namespace rowpump {

namespace {

// Columns of the joined values table get a prefix no user table is likely to use, so that
// unqualified column names in on_success still mean the user's table.
std::string value_column(const std::string& name) {
    return quote_identifier("_rp_" + name);
}

// The database clock as rowpump's own time columns (lease, dead mark) hold it: UTC, which a
// change of the server's or the session's time_zone (a daylight-saving change, SET GLOBAL
// time_zone) does not move. The operator's SQL (due, on_success, due_since) keeps NOW() in
// the server's zone, as the application writes its own columns.
constexpr const char* kNow = "UTC_TIMESTAMP(3)";

std::string placeholders_list(std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += i == 0 ? "?" : ", ?";
    return out;
}

std::string lower(std::string text) {
    for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

}  // namespace

std::string QueueSql::payload_expression(const std::string& column, PayloadKind kind) {
    const std::string quoted = quote_identifier(column);
    std::string utc;
    switch (kind) {
        case PayloadKind::plain:
            return quoted;
        case PayloadKind::datetime:
            utc = "CONVERT_TZ(" + quoted + ", @@global.time_zone, '+00:00')";
            break;
        case PayloadKind::timestamp:  // its UTC value, as it is stored
            utc = "TIMESTAMPADD(MICROSECOND, UNIX_TIMESTAMP(" + quoted +
                  ") * 1000000, CAST('1970-01-01' AS DATETIME(6)))";
            break;
    }
    return "CONCAT(LEFT(DATE_FORMAT(" + utc + ", '%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z')";
}

QueueSql::QueueSql(const QueueConfig& queue, const PayloadKinds& payload_kinds)
    : queue_(queue),
      table_(quote_identifier(queue.table)),
      id_(quote_identifier(queue.id)),
      token_(quote_identifier(queue.columns.token)),
      lease_(quote_identifier(queue.columns.lease)),
      attempts_(quote_identifier(queue.columns.attempts)),
      error_(quote_identifier(queue.columns.error)),
      dead_(quote_identifier(queue.columns.dead)) {
    for (const auto& column : queue.payload) {
        const auto kind = payload_kinds.find(lower(column));
        payload_ +=
            ", " + payload_expression(
                       column, kind == payload_kinds.end() ? PayloadKind::plain : kind->second);
    }
    const std::string claimable = "(" + queue.due.text + ")\n  AND " + dead_ + " IS NULL AND (" +
                                  lease_ + " IS NULL OR " + lease_ + " <= " + kNow + ")";
    const std::string order =
        queue.order_by.empty() ? "" : "\nORDER BY " + format_order_by(queue.order_by);

    // Claims take a row whose lease ran out only up to the lease end the lease keeper's last
    // look reached (a parameter): a row whose lease ends after that may still be held (the
    // database clock jumped since), and the keeper's next look renews it instead.
    const std::string within = " AND " + lease_ + " <= ?";
    const std::string claimable_within = "(" + queue.due.text + ")\n  AND " + dead_ +
                                         " IS NULL AND (" + lease_ + " IS NULL OR " + lease_ +
                                         " <= " + kNow + within + ")";
    claim_ = stamp(claimable_within + order);
    claimable_within_ = claimable_within;
    const std::string expired =
        lease_ + " <= " + kNow + " AND (" + queue.due.text + ")\n  AND " + dead_ + " IS NULL";
    claim_expired_ = stamp(expired + "\n " + within + "\nORDER BY " + lease_);
    std::string cursor_column;
    if (!queue.order_by.empty()) {
        const auto& first = queue.order_by.front();
        cursor_column = ", " + quote_identifier(first.column);
        claim_from_ = stamp(claimable_within + "\n  AND " + quote_identifier(first.column) +
                            (first.descending ? " <= ?" : " >= ?") + order);
    }
    // With claim: mysql, as the claim sees them: a row whose lease ended after the keeper's
    // horizon is no row a claim passed over for a lock (its task may still be held).
    passed_over_ = "SELECT " + id_ + " FROM " + table_ + "\nWHERE " +
                   (queue.claim == ClaimMode::mysql ? claimable_within : claimable) + order +
                   "\nLIMIT ?";
    claim_plan_ = "SELECT CAST(" + std::string(kNow) +
                  " + INTERVAL ? MICROSECOND AS DATETIME(3)),\n  EXISTS (SELECT 1 FROM " + table_ +
                  " WHERE " + expired + ")";
    const std::string batch = lease_ + " = ? AND " + token_ + " >= ? AND " + token_ + " < ?";
    const std::string due_age =
        queue.due_since ? "TIMESTAMPDIFF(MICROSECOND, " + queue.due_since->text + ", NOW(3))"
                        : "NULL";
    const std::string group_column =
        queue.group_by.empty() ? "" : ", " + quote_identifier(queue.group_by);
    read_back_ = "SELECT " + id_ + ", " + token_ + ", " + due_age + cursor_column + group_column +
                 payload_ + " FROM " + table_ + " WHERE " + batch + order;
    release_ =
        "UPDATE " + table_ + " SET " + token_ + " = NULL, " + lease_ + " = NULL WHERE " + batch;
    explain_due_ = "EXPLAIN SELECT " + id_ + " FROM " + table_ + "\nWHERE " + claimable + order +
                   "\nLIMIT " + std::to_string(queue.batch);
    clock_ahead_ = "SELECT CAST(" + std::string(kNow) + " + INTERVAL ? MICROSECOND AS DATETIME(3))";
    claimable_ = claimable;
    // An outcome with claims in Redis applies whether or not the row is still due (as the
    // token in the row lets it with claims in MySQL): not to a dead row, nor in a retry delay.
    applicable_ = dead_ + " IS NULL AND (" + lease_ + " IS NULL OR " + lease_ + " <= " + kNow + ")";
    if (queue.claim == ClaimMode::redis) build_scan(claimable, expired);
    if (!queue.group_by.empty()) build_grouped();
    expiring_ = "SELECT " + id_ + ", " + token_ + ", " + lease_ + " FROM " + table_ + " WHERE " +
                lease_ + " > ? AND " + lease_ + " <= " + kNow +
                " + INTERVAL ? MICROSECOND\n  AND " + dead_ + " IS NULL AND SUBSTRING(" + token_ +
                ", " + std::to_string(kSettledMarkAt) + ", 1) <> '" + kSettledMark +
                "'\nORDER BY " + lease_ + " LIMIT ?";
    list_dead_ = "SELECT " + id_ + ", " + attempts_ + ", " + error_ + ", " + dead_ + " FROM " +
                 table_ + " WHERE " + dead_ + " IS NOT NULL ORDER BY " + dead_ + " DESC LIMIT ?";

    if (queue.on_success) {
        placeholders_ = queue.on_success->placeholders;
        success_set_ = substitute_placeholders(
                           *queue.on_success,
                           [](const std::string& name) { return "`_rp`." + value_column(name); }) +
                       ",\n    ";
        success_by_id_set_ = substitute_placeholders(*queue.on_success,
                                                     [this](const std::string& name) {
                                                         success_by_id_values_.push_back(name);
                                                         return std::string("?");
                                                     }) +
                             ",\n    ";
    }
}

void QueueSql::build_scan(const std::string& claimable, const std::string& expired) {
    // A keyset scan in (first order_by column, id) order: the rows in flight stay claimable
    // until their outcome, so each scan goes on from where the last one ended.
    std::string order = id_, after = id_ + " > ?";
    std::string cursor_column;
    if (!queue_.order_by.empty()) {
        const auto& first = queue_.order_by.front();
        const std::string column = quote_identifier(first.column);
        cursor_column = ", " + column;
        order = column + (first.descending ? " DESC, " : ", ") + id_;
        // NULLs sort first: in ascending order, every non-NULL value comes after a NULL cursor.
        after = "(" + column + (first.descending ? " < ?" : " > ?") + " OR (" + column +
                " <=> ? AND " + id_ + " > ?)" +
                (first.descending ? "" : " OR (? IS NULL AND " + column + " IS NOT NULL)") + ")";
    }
    // The scan is a plain read, and lock_scanned() locks the rows it found through the
    // primary key: as a locking read through the order's index, the scan cost MariaDB as much
    // CPU as all outcomes together (docs/benchmarks.md, "Where MariaDB's time went").
    const std::string from =
        "SELECT " + id_ + cursor_column + " FROM " + table_ + "\nWHERE " + claimable;
    scan_ = from + "\nORDER BY " + order + "\nLIMIT ?";
    scan_from_ = from + "\n  AND " + after + "\nORDER BY " + order + "\nLIMIT ?";
    // Each row comes with what its token is made of (ScanStore writes the token): the CRC32
    // of the token column (the row's version, see fence(); 0 for NULL, as CRC32('')), the
    // attempts and the CRC32 of the id, as numbers, and the first kScanBatchDigits of the
    // token column: ScanStore picks a scan batch that no row of the scan starts with, so that
    // success_by_id() can tell a row its outcome already settled by that prefix alone. A
    // locking read that takes no lock it must wait for: rows another transaction holds (an
    // application's SELECT ... FOR UPDATE) are passed over, as a claim in MySQL passes them;
    // their outcome would have to wait for the lock, and every outcome of its batch with it.
    const std::string select = "SELECT " + id_ + ", IFNULL(CRC32(" + token_ + "), 0), " +
                               attempts_ + ", CRC32(" + id_ + "), LEFT(" + token_ + ", " +
                               std::to_string(kScanBatchDigits) + ")" + payload_ + " FROM " +
                               table_ + "\nWHERE ";
    lock_scanned_ = select + claimable + "\n  AND " + id_ + " IN (";
    scan_retried_ = select + expired + "\nORDER BY " + lease_ + "\nLIMIT ? FOR UPDATE SKIP LOCKED";
}

std::string QueueSql::lock_scanned(std::size_t ids) const {
    if (lock_scanned_.empty()) return "";
    return lock_scanned_ + placeholders_list(ids) + ")\nFOR UPDATE SKIP LOCKED";
}

std::string QueueSql::stamp(const std::string& where_order) const {
    // The rows are picked by a locking read that skips rows another transaction holds (an
    // application's SELECT ... FOR UPDATE, an outcome being applied), then stamped through the
    // primary key. A plain UPDATE ... LIMIT would wait for such a row, and with it every claim
    // of the queue, for as long as the lock is held: no UPDATE can skip locked rows.
    return "UPDATE " + table_ + " AS `t` JOIN (\n  SELECT " + id_ + " FROM " + table_ +
           "\n  WHERE " + where_order +
           "\n  LIMIT ? FOR UPDATE SKIP LOCKED) AS `_rp_claim`\n  ON `t`." + id_ +
           " = `_rp_claim`." + id_ + "\nSET `t`." + token_ + " = CONCAT(?, `t`." + attempts_ +
           " + 1, '-', " + id_checksum("`t`") + "),\n    `t`." + lease_ + " = ?";
}

std::string QueueSql::values_table(std::size_t rows,
                                   const std::vector<std::string>& columns) const {
    // (SELECT NULL AS a, CONCAT(id) AS b FROM t WHERE FALSE UNION ALL SELECT ?, ? ...) AS _rp
    // The first SELECT gives no row, only the id column's character set and collation: a
    // UNION's column takes them from its first SELECT. So the ids are held and compared as the
    // table holds them: the bytes of a BINARY id as they are (as bare parameters they would be
    // utf8mb4 text, which the derived table refuses when they are not UTF-8), a string id in
    // its column's collation, which the primary key lookup needs. CONCAT makes it a string of
    // varying length: a BINARY(16) column's type would pad the ids with zero bytes.
    std::string first = "SELECT NULL AS `_rp_token`, CONCAT(" + id_ + ") AS `_rp_id`";
    for (const auto& c : columns) first += ", NULL AS " + value_column(c);
    first += " FROM " + table_ + " WHERE FALSE";
    const std::string more = "\n  UNION ALL SELECT " + placeholders_list(columns.size() + 2);
    std::string derived = first;
    for (std::size_t i = 0; i < rows; ++i) derived += more;
    return "(" + derived + ") AS `_rp`";
}

std::string QueueSql::join_values(std::size_t rows, const std::vector<std::string>& columns) const {
    // With claims in MySQL, joined on token and id: the id gives the primary-key lookup, the
    // token is the fence. With claims in Redis the row holds no claim: see fence().
    const std::string on = queue_.claim == ClaimMode::mysql
                               ? " AND `t`." + token_ + " = `_rp`.`_rp_token`"
                               : std::string();
    return "UPDATE " + table_ + " AS `t` JOIN " + values_table(rows, columns) + "\n  ON `t`." +
           id_ + " = `_rp`.`_rp_id`" + on + "\n";
}

std::string QueueSql::id_checksum(const std::string& table) const {
    const std::string id = table.empty() ? id_ : table + "." + id_;
    return "LPAD(HEX(CRC32(" + id + ")), 8, '0')";
}

std::string QueueSql::row_version(const std::string& table) const {
    const std::string token = table.empty() ? token_ : table + "." + token_;
    return "LPAD(HEX(CRC32(COALESCE(" + token + ", ''))), 8, '0')";
}

std::string QueueSql::fence() const {
    // With claims in Redis the row holds no claim. The outcome (of a task the leader issued,
    // InFlight) applies while the row is not dead nor in a retry delay, due or not, and still
    // at the version its task was read at: its token's digits 9 to 16 are a checksum of the row's
    // token column then, and every applied outcome leaves its own settled token there. So at most
    // one outcome applies per version of the row: a copy applied again (a dispatcher stopped after
    // the commit, before acknowledging it) or late (a leader that lost its lock while it applied)
    // changes nothing, even when the row is due again by then.
    if (queue_.claim == ClaimMode::mysql) return "";
    return "\nWHERE " + applicable_ + "\n  AND " + row_version("`t`") +
           " = SUBSTRING(`_rp`.`_rp_token`, 9, 8)\n  AND NOT (`t`." + token_ + " <=> " +
           settled_token() + ")";
}

std::string QueueSql::settled_token() {
    // The claim token with its batch's last hex digit replaced: as long as the claim token,
    // never a valid claim token, and outside every claim batch's token range.
    return "INSERT(`_rp`.`_rp_token`, " + std::to_string(kSettledMarkAt) + ", 1, '" + kSettledMark +
           "')";
}

std::string QueueSql::success(std::size_t rows) const {
    return join_values(rows, placeholders_) + "SET " + success_set_ + "`t`." + token_ + " = " +
           settled_token() + ", `t`." + lease_ + " = NULL, `t`." + attempts_ + " = 0, `t`." +
           error_ + " = NULL" + fence();
}

std::string QueueSql::success_by_id(std::size_t rows) const {
    if (queue_.claim == ClaimMode::mysql) return "";
    // The settled token as settled_token() makes it from the claim token: the row's version
    // and attempt are the token's, as the WHERE clause makes sure.
    const std::string settled = "CONCAT(?, LEFT(" + row_version("") + ", " +
                                std::to_string(kSettledMarkAt - kScanBatchDigits - 1) + "), '" +
                                kSettledMark + "-', " + attempts_ + " + 1, '-', " +
                                id_checksum("") + ")";
    // The fence as numbers, one (id, version, attempts) per row, which is also the primary key
    // range to read: CRC32 of the token column (0 for NULL, as CRC32('')), never its text.
    // Every token of the scan batch's rows starts with the batch only once one of its outcomes
    // applied (ScanStore::pick_batch), so that prefix tells an outcome applied before.
    std::string list;
    for (std::size_t i = 0; i < rows; ++i) list += i == 0 ? "(?, ?, ?)" : ", (?, ?, ?)";
    // Assignments run left to right and see the columns assigned before them: the token,
    // made from the attempts and the old token, comes before both change.
    return "UPDATE " + table_ + " SET " + success_by_id_set_ + token_ + " = " + settled + ", " +
           lease_ + " = NULL, " + attempts_ + " = 0, " + error_ + " = NULL\nWHERE (" + id_ +
           ", IFNULL(CRC32(" + token_ + "), 0), " + attempts_ + ") IN (" + list + ")\n  AND " +
           applicable_ + "\n  AND NOT (LEFT(" + token_ + ", " + std::to_string(kScanBatchDigits) +
           ") <=> ?)";
}

std::string QueueSql::retry(std::size_t rows) const {
    return join_values(rows, {"attempts", "error", "delay"}) + "SET `t`." + token_ + " = " +
           settled_token() + ", `t`." + attempts_ + " = `_rp`.`_rp_attempts`, `t`." + error_ +
           " = `_rp`.`_rp_error`, `t`." + lease_ + " = " + kNow +
           " + INTERVAL `_rp`.`_rp_delay` MICROSECOND" + fence();
}

std::string QueueSql::dead(std::size_t rows) const {
    std::string on_dead = queue_.on_dead ? queue_.on_dead->text + ",\n    " : "";
    return join_values(rows, {"attempts", "error"}) + "SET " + on_dead + "`t`." + token_ + " = " +
           settled_token() + ", `t`." + lease_ + " = NULL, `t`." + attempts_ +
           " = `_rp`.`_rp_attempts`, `t`." + error_ + " = `_rp`.`_rp_error`, `t`." + dead_ + " = " +
           kNow + fence();
}

std::string QueueSql::settled(std::size_t rows) const {
    return "SELECT COUNT(DISTINCT `t`." + id_ + ") FROM " + table_ + " AS `t` JOIN " +
           values_table(rows, {}) + "\n  ON `t`." + id_ + " = `_rp`.`_rp_id` AND `t`." + token_ +
           " = " + settled_token();
}

std::string QueueSql::find_rows(std::size_t rows) const {
    // The values table first: one primary-key lookup per id, never a scan of the table (a
    // locking read would lock each row it reads).
    return "SELECT `_rp`.`_rp_token` FROM " + values_table(rows, {}) + "\n  STRAIGHT_JOIN " +
           table_ + " AS `t` ON `t`." + id_ + " = `_rp`.`_rp_id`";
}

std::string QueueSql::lock_rows(std::size_t rows) const {
    return find_rows(rows) + "\nFOR UPDATE SKIP LOCKED";
}

std::string QueueSql::extend(std::size_t rows) const {
    return join_values(rows, {"lease"}) + "SET `t`." + lease_ + " = GREATEST(COALESCE(`t`." +
           lease_ + ", " + kNow + "), " + kNow + " + INTERVAL `_rp`.`_rp_lease` MICROSECOND)";
}

QueueSql::Revive QueueSql::revive(std::size_t ids, const std::optional<SqlFragment>& set) const {
    // The rows stay marked dead until the last step, so that every step finds the same rows.
    const std::string rows =
        " WHERE " + dead_ + " IS NOT NULL" +
        (ids == 0 ? "" : " AND " + id_ + " IN (" + placeholders_list(ids) + ")");
    const std::string not_due = "NOT COALESCE((" + queue_.due.text + "), FALSE)";
    Revive r;
    r.reset = "UPDATE " + table_ + " SET " + (set ? set->text + ", " : "") + attempts_ + " = 0, " +
              lease_ + " = NULL, " + token_ + " = NULL" + rows;
    r.count = "SELECT COUNT(*), COALESCE(SUM(" + not_due + "), 0) FROM " + table_ + rows;
    r.not_due = "SELECT " + id_ + " FROM " + table_ + rows + " AND " + not_due + " ORDER BY " +
                id_ + " LIMIT " + std::to_string(Revive::kShownNotDue);
    r.finish = "UPDATE " + table_ + " SET " + dead_ + " = NULL" + rows;
    return r;
}

std::string QueueSql::count_due(std::int64_t cap, Millis timeout, const Dialect& dialect) const {
    const std::string since = queue_.due_since ? queue_.due_since->text : "NULL";
    return dialect.time_limited(
        "SELECT COUNT(*), TIMESTAMPDIFF(MICROSECOND, MIN(`s`), NOW(3)) FROM (SELECT " + since +
            " AS `s` FROM " + table_ + "\nWHERE " + claimable_ + "\nLIMIT " +
            std::to_string(cap + 1) + ") AS `due`",
        timeout);
}

std::string QueueSql::discard_ids(std::size_t ids, bool apply_on_dead) const {
    std::string set = dead_ + " = NULL, " + attempts_ + " = 0, " + error_ + " = NULL";
    if (apply_on_dead) {
        set = (queue_.on_dead ? queue_.on_dead->text + ", " : std::string()) + set + ", " + lease_ +
              " = NULL, " + token_ + " = NULL";
    }
    return "UPDATE " + table_ + " SET " + set + " WHERE " + dead_ + " IS NOT NULL AND " + id_ +
           " IN (" + placeholders_list(ids) + ")";
}

std::vector<ColumnDefinition> QueueSql::bookkeeping_columns() const {
    const auto& c = queue_.columns;
    return {{c.token, "VARCHAR(80) CHARACTER SET ascii COLLATE ascii_bin NULL"},
            {c.lease, "DATETIME(3) NULL"},
            {c.attempts, "INT UNSIGNED NOT NULL DEFAULT 0"},
            {c.error, "VARCHAR(1024) CHARACTER SET utf8mb4 NULL"},
            {c.dead, "DATETIME(3) NULL"}};
}

std::string QueueSql::add_lease_index(const Dialect& dialect) const {
    return dialect.add_index(queue_.table, queue_.columns.lease_index, queue_.columns.lease);
}

}  // namespace rowpump
