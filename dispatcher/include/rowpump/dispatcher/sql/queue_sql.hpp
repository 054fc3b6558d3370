#pragma once

// Every SQL statement rowpump runs against a queue's table, built once from the validated
// config. Identifiers are quoted; values are always `?` parameters.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/sql/dialect.hpp"

namespace rowpump {

// How a payload column is read: as the server gives it (numbers and strings as text, BLOB
// bytes as they are), or, for DATETIME and TIMESTAMP, as ISO 8601 UTC text converted in SQL
// ("2026-11-26T09:30:00.000Z"): a TIMESTAMP from its UTC value, a DATETIME taken as written in
// the server's time zone (@@global.time_zone, where NOW() writes it), so that the session's
// time zone changes neither.
enum class PayloadKind { plain, datetime, timestamp };
using PayloadKinds = std::map<std::string, PayloadKind>;  // by lower-case name; absent: plain

class QueueSql {
public:
    // `payload_kinds`: the DATETIME and TIMESTAMP columns of the queue's payload, as the
    // table has them (payload_kinds() in mysql/column_types.hpp reads them).
    explicit QueueSql(const QueueConfig& queue, const PayloadKinds& payload_kinds = {});

    // The select-list expression a payload column is read by.
    static std::string payload_expression(const std::string& column, PayloadKind kind);

    // Before a claim: its lease end (the database clock now plus the lease, as DATETIME(3)),
    // and whether claim_expired() would find a row. A plain read, which takes no locks: the
    // locking claim_expired() runs only when there is something to claim. Params: lease in
    // microseconds.
    const std::string& claim_plan() const { return claim_plan_; }
    // Stamps a claim token and a lease end on up to LIMIT claimable rows, passing over rows
    // that other transactions hold locked (FOR UPDATE SKIP LOCKED); rows whose lease ran out
    // only up to a lease end the lease keeper has looked at (LeaseKeeper::horizon).
    // Params: that lease end, limit, token batch prefix, lease end (from claim_plan).
    const std::string& claim() const { return claim_; }
    // Claims rows whose lease ran out or whose retry backoff has passed, oldest first, through
    // the lease index, wherever they are in the order. Params as claim().
    const std::string& claim_expired() const { return claim_expired_; }
    // The database clock now plus an interval, as DATETIME(3) in UTC like the lease column.
    // Params: the interval in microseconds.
    const std::string& clock_ahead() const { return clock_ahead_; }
    // The same as claim(), resuming a sweep: only rows at or after a cursor value of the first
    // order_by column (see QueueStore::claim). Params: the keeper's lease end, cursor, limit,
    // prefix, lease end. Empty
    // without order_by.
    const std::string& claim_from() const { return claim_from_; }
    // After a claim from the start of the order that took fewer rows than it could: the first
    // rows that are still claimable, which that claim passed over because another
    // transaction held them locked (or that came due since). A plain read, no locks.
    // Params: with claim: mysql the lease keeper's horizon (as claim()); limit
    // (kPassedOverLimit, plus the rows in flight with claim: redis).
    static constexpr int kPassedOverLimit = 20;
    const std::string& passed_over() const { return passed_over_; }
    // A batch's ids, tokens, due ages (microseconds since due_since, NULL without it), first
    // order_by column (if any), group_by column (if any) and payload columns, in order_by order,
    // found through the lease index: every row of a batch has the same lease end. Params: lease
    // end, lowest token, bound above all tokens of the batch.
    const std::string& read_back() const { return read_back_; }
    // With group_by, the fair claim (docs/fairness.md; built in grouped_claim_sql.cpp).
    // The table's keys in order, kKeyRingPage at a time, one index dive per key on an index
    // that starts with the group_by column: whether the NULL key has a row, the first
    // non-NULL key (NULL: none), the first key after one (NULL: none). Params: [key].
    static constexpr std::size_t kKeyRingPage = 10000;
    const std::string& null_key() const { return null_key_; }
    const std::string& first_key() const { return first_key_; }
    const std::string& key_after() const { return key_after_; }
    // claim() over several keys at once: up to a limit of each key's claimable rows, in
    // order_by order, through one UNION ALL of per-key reads; the first `from_cursor` keys
    // at or after a cursor value of the first order_by column, the next `from_first` from
    // their first row. Params: per key (key, the keeper's lease end, [cursor,] limit), then
    // token batch prefix, lease end. Each key is read through `key_index` (FORCE INDEX) when
    // not empty: an index that starts with the group_by column (find_key_index).
    std::string grouped_claim(std::size_t from_cursor, std::size_t from_first,
                              const std::string& key_index = "") const;
    // With concurrency_per_key: tasks in flight (lease running, outcome not applied) per key,
    // as key and count, through the lease index. No params.
    const std::string& in_flight_by_key() const { return in_flight_by_key_; }
    // With claim: redis, instead of the claim statements: up to LIMIT claimable rows, as id
    // and the first order_by column (if any), in (order_by column, id) order, read without
    // locks. scan_from() goes on after a cursor. Params: limit; scan_from: cursor id (with
    // order_by: cursor value, cursor value, cursor id, and in ascending order the cursor value
    // once more), limit.
    const std::string& scan() const { return scan_; }
    const std::string& scan_from() const { return scan_from_; }
    // Of `ids` scanned rows, those still claimable and not locked by another transaction, as
    // id, the row's version (CRC32 of the token column, 0 for NULL), its attempts, CRC32 of
    // the id, the first 8 characters of the token column (NULL for none), then the payload
    // columns: ScanStore makes the token of them. Params: the ids. Empty with claim: mysql.
    std::string lock_scanned(std::size_t ids) const;
    // Rows whose retry delay has passed, oldest first, through the lease index (which with
    // claim: redis holds only retry delays), in lock_scanned()'s columns. Params: limit.
    const std::string& scan_retried() const { return scan_retried_; }
    // Gives a batch's claims back (its push failed). Params as read_back.
    const std::string& release() const { return release_; }
    // The claimable-row query for EXPLAIN in `rowpump check`, with LIMIT `batch` inlined.
    const std::string& explain_due() const { return explain_due_; }
    // Counts rows that are due and claimable now, stopping at `cap` + 1 and after `timeout`
    // (Dialect::time_limited), and the age in microseconds of the oldest `due_since` among
    // them (NULL without due_since). Shared by status, metrics and the dashboard.
    std::string count_due(std::int64_t cap, Millis timeout, const Dialect& dialect) const;
    // Claimed rows whose lease ends within a window from now, oldest lease first: id, token,
    // lease end. Rows whose outcome was applied keep a settled token and are left out.
    // Params: lease end to start after (exclusive), window in microseconds, limit.
    const std::string& expiring() const { return expiring_; }

    // Outcome statements join the table with `rows` rows of bound values, each row starting
    // with (token, id). Row layouts:
    //   success: token, id, then one value per on_success placeholder (placeholders() order)
    //   retry:   token, id, attempts, error, delay in microseconds
    //   dead:    token, id, attempts, error
    //   extend:  token, id, lease in microseconds
    // success, retry and dead leave the row with its settled token: the claim token with
    // kSettledMark at position kSettledMarkAt, so that an outcome applied a second time (a
    // dispatcher stopped after the commit, before acknowledging it in Redis) is recognised.
    // With claim: redis they join on the id alone (the row holds no claim) and apply only to
    // a claimable row still at the version the task was read at (fence()).
    std::string success(std::size_t rows) const;
    // With claim: redis, the success of `rows` tasks read in one scan (their tokens share the
    // first kScanBatchDigits) with equal on_success values, as one UPDATE through the primary
    // key, fenced as fence() fences the joined form: cheaper than the join, which MariaDB
    // applies in a second pass over the rows it found. Params: the values in
    // success_by_id_values() order, the scan batch, then per row its id, its version (the
    // token's digits 9 to 16 as a number) and its attempt minus one, then the scan batch
    // again. Empty with claim: mysql.
    std::string success_by_id(std::size_t rows) const;
    const std::vector<std::string>& success_by_id_values() const { return success_by_id_values_; }
    static constexpr std::size_t kScanBatchDigits = 8;
    std::string retry(std::size_t rows) const;
    std::string dead(std::size_t rows) const;
    std::string extend(std::size_t rows) const;
    // How many distinct rows of `rows` (token, id) hold the settled token of that claim.
    std::string settled(std::size_t rows) const;
    // Before a transaction writes to rows by id (outcomes, lease renewals): of `rows` pairs
    // (position, id), the positions whose row this transaction now holds locked. Rows another
    // transaction holds (an application's SELECT ... FOR UPDATE) are passed over (FOR UPDATE
    // SKIP LOCKED), so the writes that follow wait for no lock of theirs. The same text on
    // MariaDB and MySQL 8. Params: position, id, position, id, ...
    std::string lock_rows(std::size_t rows) const;
    // Of `rows` pairs (position, id), the positions whose row exists: a plain read, which
    // waits for no lock. Tells a row passed over by lock_rows() from one that is gone.
    std::string find_rows(std::size_t rows) const;
    static constexpr std::size_t kSettledMarkAt = 16;  // 1-based: the batch's last hex digit
    static constexpr const char* kSettledMark = "=";

    // Names bound after (token, id) in success rows.
    const std::vector<std::string>& placeholders() const { return placeholders_; }

    // What `rowpump migrate` adds, each as its own ALTER TABLE (Dialect::add_columns,
    // add_index) so that neither makes the server rebuild the table: the bookkeeping columns
    // (metadata only), then the lease index (built in place while writes go on).
    std::vector<ColumnDefinition> bookkeeping_columns() const;
    std::string add_lease_index(const Dialect& dialect) const;

    // CLI: dead rows (id, attempts, error, dead_at), newest first. Params: limit.
    const std::string& list_dead() const { return list_dead_; }
    // CLI `retry`, run in this order in one transaction, each taking the same `ids` ids (none
    // with ids = 0: every dead row): reset the dead rows' attempts and claim, after the
    // operator's SET list if one is given; count them and those the due condition is not true
    // for (two columns); list up to kShownNotDue of the latter; clear their dead mark.
    struct Revive {
        static constexpr int kShownNotDue = 10;
        std::string reset, count, not_due, finish;
    };
    Revive revive(std::size_t ids, const std::optional<SqlFragment>& set) const;
    // Dashboard: discard dead rows (they leave the dead list). discard_ids(n, true) applies
    // on_dead again and clears the claim columns; with false it only clears the dead mark, so
    // the row's own due condition decides what happens to it. Params: n ids.
    std::string discard_ids(std::size_t ids, bool apply_on_dead) const;

private:
    std::string stamp(const std::string& where_order) const;
    std::string values_table(std::size_t rows, const std::vector<std::string>& columns) const;
    std::string join_values(std::size_t rows, const std::vector<std::string>& columns) const;
    static std::string settled_token();
    std::string fence() const;
    // A checksum of the token column of `table` ("" for the statement's only table), 8 hex
    // digits: the row's version with claim: redis.
    std::string row_version(const std::string& table) const;
    // A checksum of the id of `table` ("" as above), 8 hex digits: the last part of a claim
    // token, so that tokens differ between rows of a batch and keep one length whatever the
    // id's type and size.
    std::string id_checksum(const std::string& table) const;
    void build_scan(const std::string& claimable, const std::string& expired);
    void build_grouped();

    const QueueConfig queue_;  // a copy: a QueueSql may outlive the config it was built from
    std::string table_, id_, token_, lease_, attempts_, error_, dead_;
    std::vector<std::string> placeholders_;
    std::string success_set_;
    std::string success_by_id_set_;
    std::vector<std::string> success_by_id_values_;  // each placeholder as it occurs
    std::string clock_ahead_;
    std::string claim_plan_, claim_, claim_expired_, claim_from_, passed_over_, read_back_,
        release_, explain_due_, claimable_, list_dead_, expiring_, scan_, scan_from_, scan_retried_,
        lock_scanned_;
    std::string applicable_;  // with claim: redis, rows an outcome may change (fence())
    std::string payload_;     // ", <expression>" per payload column, in the config's order
    std::string claimable_within_, null_key_, first_key_, key_after_, in_flight_by_key_;
};

}  // namespace rowpump
