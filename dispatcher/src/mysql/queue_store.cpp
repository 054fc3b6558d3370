#include "rowpump/dispatcher/mysql/queue_store.hpp"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

#include "rowpump/dispatcher/loop/in_flight.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

namespace {

// Rows per statement of outcomes or of rows a scan found; keeps the parameter count far below
// MySQL's limit. Such statements are prepared once per kind and size (see for_each_statement).
constexpr std::size_t kRowsPerStatement = 512;
// Smaller groups of equal successes are joined with the rest: a statement per group would
// cost more than it saves.
constexpr std::size_t kSuccessByIdMin = 16;
// How often, at most, a claim looks for rows it passed over (one plain SELECT), and how long
// a row must stay locked before it is reported.
constexpr std::chrono::milliseconds kLockedRowLook{5000};

// Calls chunk(start, n, size) for each run of at most kRowsPerStatement of `count` rows: n rows
// from `start`, bound to a statement prepared for `size` rows (n rounded up to a power of two,
// so that few sizes are prepared; the extra rows repeat the chunk's last one).
template <typename F>
void for_each_statement(std::size_t count, F&& chunk) {
    for (std::size_t start = 0; start < count; start += kRowsPerStatement) {
        const std::size_t n = std::min(kRowsPerStatement, count - start);
        std::size_t size = 1;
        while (size < n) size *= 2;
        chunk(start, n, size);
    }
}

std::string micros(Millis d) {
    return std::to_string(d.count() * 1000);
}

}  // namespace

AppliedCounts& AppliedCounts::operator+=(const AppliedCounts& o) {
    completed += o.completed;
    retried += o.retried;
    dead += o.dead;
    stale += o.stale;
    again += o.again;
    return *this;
}

QueueStore::QueueStore(const Config& config, const QueueConfig& queue)
    : config_(config),
      queue_(queue),
      sql_(queue),
      random_(std::random_device{}()),
      locked_rows_(kLockedRowLook) {}

QueueStore::~QueueStore() = default;

std::unique_ptr<QueueStore> QueueStore::open(const Config& config, const QueueConfig& queue) {
    std::unique_ptr<QueueStore> store(new QueueStore(config, queue));
    store->conn_ = connect_mysql(config.mysql);
    store->passed_over_.reset(store->conn_->prepareStatement(store->sql_.passed_over()));
    if (queue.claim == ClaimMode::redis) {
        store->scan_.reset(store->conn_->prepareStatement(store->sql_.scan()));
        store->scan_from_.reset(store->conn_->prepareStatement(store->sql_.scan_from()));
        store->scan_retried_.reset(store->conn_->prepareStatement(store->sql_.scan_retried()));
        return store;
    }
    store->claim_plan_.reset(store->conn_->prepareStatement(store->sql_.claim_plan()));
    store->claim_.reset(store->conn_->prepareStatement(store->sql_.claim()));
    store->claim_expired_.reset(store->conn_->prepareStatement(store->sql_.claim_expired()));
    if (!store->sql_.claim_from().empty()) {
        store->claim_from_.reset(store->conn_->prepareStatement(store->sql_.claim_from()));
    }
    store->read_back_.reset(store->conn_->prepareStatement(store->sql_.read_back()));
    store->release_.reset(store->conn_->prepareStatement(store->sql_.release()));
    store->expiring_.reset(store->conn_->prepareStatement(store->sql_.expiring()));
    return store;
}

std::int64_t QueueStore::stamp(sql::PreparedStatement& stmt, const std::string& prefix,
                               const std::string& lease_until,
                               const std::optional<std::string>& cursor, std::int64_t limit) {
    unsigned index = 1;
    if (cursor) stmt.setString(index++, *cursor);
    stmt.setInt64(index++, limit);
    stmt.setString(index++, prefix);
    stmt.setString(index, lease_until);
    std::int64_t changed = 0;
    retry_lock_conflicts([&] { changed = stmt.executeUpdate(); });
    return changed;
}

QueueStore::Plan QueueStore::plan() {
    claim_plan_->setString(1, micros(queue_.lease));
    std::unique_ptr<sql::ResultSet> rs(claim_plan_->executeQuery());
    if (!rs->next()) throw std::runtime_error("the claim plan query returned no row");
    return {rs->getString(1), rs->getInt(2) == 1};
}

Claim QueueStore::claim(std::int64_t limit) {
    // Both statements share a batch prefix and differ in its last hex digit, so one range
    // read-back finds both, and the digit tells swept rows from expired ones.
    // A shard's batches start with its position (messages.hpp, token_shard).
    char batch[24];
    if (queue_.shard) {
        std::snprintf(batch, sizeof batch, "%s%013llX",
                      protocol::shard_batch_prefix(*queue_.shard).c_str(),
                      static_cast<unsigned long long>(random_() >> 12));
    } else {
        std::snprintf(batch, sizeof batch, "%015llX",
                      static_cast<unsigned long long>(random_() >> 4));
    }
    const std::string expired_prefix = std::string(batch) + "0-",
                      sweep_prefix = std::string(batch) + "1-";
    const Plan plan = this->plan();
    Claim claim{expired_prefix,
                std::string(batch) + "1.",
                plan.lease_until,
                {}};  // '.' sorts right after '-'

    const auto expired = plan.any_expired ? stamp(*claim_expired_, expired_prefix,
                                                  claim.lease_until, std::nullopt, limit)
                                          : 0;
    std::int64_t swept = 0;
    if (expired < limit) {
        const bool resume = cursor_.has_value();
        swept = stamp(resume ? *claim_from_ : *claim_, sweep_prefix, claim.lease_until, cursor_,
                      limit - expired);
        if (swept < limit - expired) cursor_.reset();  // the sweep reached the end: start over
        // Short, and from the start of the order: every claimable row that nobody held is now ours.
        if (!resume && swept < limit - expired) look_for_locked_rows();
    }
    if (expired + swept == 0) return claim;

    read_back_->setString(1, claim.lease_until);
    read_back_->setString(2, claim.low);
    read_back_->setString(3, claim.high);
    std::unique_ptr<sql::ResultSet> rs(read_back_->executeQuery());
    claim.rows.reserve(rs->rowsCount());
    std::optional<std::string> last_swept;
    while (rs->next()) {
        claim.rows.push_back({rs->getString(1), rs->getString(2),
                              rs->isNull(3)
                                  ? std::nullopt
                                  : std::optional(std::chrono::microseconds(rs->getInt64(3)))});
        if (claim_from_ && claim.rows.back().token.rfind(sweep_prefix, 0) == 0) {
            last_swept =
                rs->isNull(4) ? std::nullopt : std::optional<std::string>(rs->getString(4));
        }
    }
    if (claim_from_ && swept == limit - expired && swept > 0) cursor_ = std::move(last_swept);
    return claim;
}

std::string QueueStore::fresh_batch() {
    // The token's first kScanBatchDigits hex digits; lock_scanned() reads the rest.
    static_assert(QueueSql::kScanBatchDigits == 8, "a scan batch is 32 random bits");
    char batch[16];
    std::snprintf(batch, sizeof batch, "%0*llX", static_cast<int>(QueueSql::kScanBatchDigits),
                  static_cast<unsigned long long>(random_() & 0xFFFFFFFFULL));
    return batch;
}

std::vector<ClaimedRow> QueueStore::scan_retried(std::int64_t limit, const InFlight& in_flight) {
    const std::string batch = fresh_batch();
    scan_retried_->setInt64(1, limit);
    std::unique_ptr<sql::ResultSet> rs(scan_retried_->executeQuery());
    std::vector<ClaimedRow> rows;
    while (rs->next()) {
        auto id = rs->getString(1);
        if (!in_flight.holds(id)) rows.push_back({std::move(id), batch + rs->getString(2)});
    }
    return rows;
}

QueueStore::ScanPage QueueStore::scan(std::int64_t want, std::int64_t read_limit,
                                      const InFlight& in_flight) {
    auto& stmt = scan_cursor_ ? *scan_from_ : *scan_;
    unsigned index = 1;
    if (scan_cursor_) {
        const auto bind_value = [&] {
            if (scan_cursor_->value) {
                stmt.setString(index++, *scan_cursor_->value);
            } else {
                stmt.setNull(index++, 0);
            }
        };
        if (!queue_.order_by.empty()) {  // (value, value, id[, value]): see QueueSql::scan_from
            bind_value();
            bind_value();
        }
        stmt.setString(index++, scan_cursor_->id);
        if (!queue_.order_by.empty() && !queue_.order_by.front().descending) bind_value();
    }
    stmt.setInt64(index, read_limit);
    std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
    const auto read = static_cast<std::int64_t>(rs->rowsCount());
    std::vector<std::string> found;
    bool wanted_all = false;
    while (rs->next()) {
        if (static_cast<std::int64_t>(found.size()) == want) {
            wanted_all = true;  // the rest of the page is left for the next scan
            break;
        }
        ScanCursor here{rs->getString(1), std::nullopt};
        if (!queue_.order_by.empty() && !rs->isNull(2)) here.value = rs->getString(2);
        if (!in_flight.holds(here.id)) found.push_back(here.id);
        scan_cursor_ = std::move(here);  // the next scan goes on after the last row looked at
    }
    ScanPage page;
    page.rows = lock_scanned(found);
    page.ended = !wanted_all && read < read_limit;
    if (page.ended && sweeping_from_start_) {
        sweeping_from_start_ = false;
        look_for_locked_rows(&in_flight);
    }
    return page;
}

std::vector<ClaimedRow> QueueStore::lock_scanned(const std::vector<std::string>& ids) {
    std::unordered_map<std::string, std::string> tokens;
    const std::string batch = fresh_batch();
    for_each_statement(ids.size(), [&](std::size_t start, std::size_t n, std::size_t size) {
        auto& stmt = lock_scanned_statements_[size];
        if (!stmt) stmt.reset(conn_->prepareStatement(sql_.lock_scanned(size)));
        for (std::size_t i = 0; i < size; ++i)
            stmt->setString(static_cast<unsigned>(i + 1), ids[start + std::min(i, n - 1)]);
        std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
        while (rs->next()) tokens.emplace(rs->getString(1), batch + rs->getString(2));
    });
    // In the scan's order; a row missing was locked by another transaction, or is no longer
    // claimable.
    std::vector<ClaimedRow> rows;
    rows.reserve(tokens.size());
    for (const auto& id : ids) {
        auto it = tokens.find(id);
        if (it != tokens.end()) rows.push_back({id, std::move(it->second)});
    }
    return rows;
}

void QueueStore::rescan_from_start() {
    scan_cursor_.reset();
    sweeping_from_start_ = true;
}

void QueueStore::look_for_locked_rows(const InFlight* in_flight) {
    const auto now = LockedRowWatch::Clock::now();
    if (!locked_rows_.look_due(now)) return;
    std::vector<std::string> ids;
    passed_over_->setInt64(1, QueueSql::kPassedOverLimit +
                                  static_cast<std::int64_t>(in_flight ? in_flight->size() : 0));
    std::unique_ptr<sql::ResultSet> rs(passed_over_->executeQuery());
    while (rs->next()) {
        auto id = rs->getString(1);
        if (!in_flight || !in_flight->holds(id)) ids.push_back(std::move(id));
    }
    for (const auto& id : locked_rows_.looked(ids, now)) {
        spdlog::warn(
            "queue {}: row {} has been locked by another transaction for {} or more; claims pass "
            "over "
            "it until it is released",
            queue_.label(), id, format_duration(locked_rows_.check_every()));
    }
}

std::int64_t QueueStore::release(const Claim& claim) {
    release_->setString(1, claim.lease_until);
    release_->setString(2, claim.low);
    release_->setString(3, claim.high);
    return release_->executeUpdate();
}

std::string QueueStore::outcome_sql(RowUpdate kind, std::size_t rows) const {
    switch (kind) {
        case RowUpdate::success:
            return sql_.success(rows);
        case RowUpdate::retry:
            return sql_.retry(rows);
        case RowUpdate::dead:
            return sql_.dead(rows);
        case RowUpdate::extend:
            return sql_.extend(rows);
        case RowUpdate::settled:
            return sql_.settled(rows);
    }
    return "";
}

sql::PreparedStatement& QueueStore::outcome_statement(RowUpdate kind, std::size_t rows) {
    auto& stmt = outcome_statements_[{kind, rows}];
    if (!stmt) stmt.reset(conn_->prepareStatement(outcome_sql(kind, rows)));
    return *stmt;
}

template <typename Run>
std::int64_t QueueStore::for_each_chunk(RowUpdate kind,
                                        const std::vector<std::vector<std::string>>& rows,
                                        std::size_t columns, Run&& run) {
    std::int64_t total = 0;
    for_each_statement(rows.size(), [&](std::size_t start, std::size_t n, std::size_t size) {
        auto& stmt = outcome_statement(kind, size);
        // A multi-table UPDATE changes a row once however many joined rows match it, and
        // counts it once.
        unsigned index = 1;
        for (std::size_t i = 0; i < size; ++i) {
            const auto& row = rows[start + std::min(i, n - 1)];
            for (std::size_t c = 0; c < std::min(columns, row.size()); ++c)
                stmt.setString(index++, row[c]);
        }
        total += run(stmt);
    });
    return total;
}

std::int64_t QueueStore::update_joined(RowUpdate kind,
                                       const std::vector<std::vector<std::string>>& rows) {
    return for_each_chunk(kind, rows, SIZE_MAX,
                          [](sql::PreparedStatement& stmt) { return stmt.executeUpdate(); });
}

std::int64_t QueueStore::count_settled(const std::vector<std::vector<std::string>>& rows) {
    // Only (token, id) of each row; COUNT(DISTINCT id) ignores the repeated last row.
    return for_each_chunk(RowUpdate::settled, rows, 2, [](sql::PreparedStatement& stmt) {
        std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
        return rs->next() ? rs->getInt64(1) : 0;
    });
}

std::int64_t QueueStore::apply_kind(RowUpdate kind,
                                    const std::vector<std::vector<std::string>>& rows,
                                    std::int64_t& already) {
    const auto changed = update_joined(kind, rows);
    // Rows applied just now hold the settled token too; the rest of those that do had it
    // before this batch. Looked up only when some outcome did not apply.
    if (changed < static_cast<std::int64_t>(rows.size())) already += count_settled(rows) - changed;
    return changed;
}

std::int64_t QueueStore::apply_success(const std::vector<std::vector<std::string>>& rows,
                                       std::int64_t& already) {
    if (queue_.claim == ClaimMode::mysql) return apply_kind(RowUpdate::success, rows, already);
    // Group by scan batch and values: rows are (token, id, values in placeholders() order).
    // A token too short to hold a scan batch is joined (and found stale there).
    std::map<std::vector<std::string>, std::vector<const std::vector<std::string>*>> groups;
    std::vector<std::vector<std::string>> joined;
    for (const auto& row : rows) {
        if (row[0].size() <= QueueSql::kScanBatchDigits) {
            joined.push_back(row);
            continue;
        }
        std::vector<std::string> key{row[0].substr(0, QueueSql::kScanBatchDigits)};
        key.insert(key.end(), row.begin() + 2, row.end());
        groups[key].push_back(&row);
    }
    std::int64_t changed = 0;
    for (const auto& [key, members] : groups) {
        if (members.size() >= kSuccessByIdMin) {
            changed += update_by_id(members);
        } else {
            for (const auto* row : members) joined.push_back(*row);
        }
    }
    changed += update_joined(RowUpdate::success, joined);
    // As apply_kind: rows applied before hold the settled token too.
    if (changed < static_cast<std::int64_t>(rows.size())) already += count_settled(rows) - changed;
    return changed;
}

std::int64_t QueueStore::update_by_id(const std::vector<const std::vector<std::string>*>& rows) {
    const auto& first = *rows.front();
    const std::string batch = first[0].substr(0, QueueSql::kScanBatchDigits);
    std::vector<std::string> values;  // in the statement's order of placeholders
    for (const auto& name : sql_.success_by_id_values()) {
        const auto& names = sql_.placeholders();
        const auto at = std::find(names.begin(), names.end(), name) - names.begin();
        values.push_back(first[2 + static_cast<std::size_t>(at)]);
    }
    std::int64_t total = 0;
    for_each_statement(rows.size(), [&](std::size_t start, std::size_t n, std::size_t size) {
        auto& stmt = success_by_id_statements_[size];
        if (!stmt) stmt.reset(conn_->prepareStatement(sql_.success_by_id(size)));
        const auto row = [&](std::size_t i) -> const auto& {
            return *rows[start + std::min(i, n - 1)];
        };
        unsigned index = 1;
        for (const auto& value : values) stmt->setString(index++, value);
        stmt->setString(index++, batch);
        for (std::size_t i = 0; i < size; ++i) stmt->setString(index++, row(i)[1]);
        for (std::size_t i = 0; i < size; ++i)
            stmt->setString(index++, row(i)[0].substr(QueueSql::kScanBatchDigits));
        stmt->setString(index, batch);
        total += stmt->executeUpdate();
    });
    return total;
}

AppliedCounts QueueStore::apply(const std::vector<protocol::Done>& outcomes) {
    std::vector<std::vector<std::string>> success, retry, dead, extend;
    std::uniform_real_distribution<double> jitter(0.0, 1.0);
    for (const auto& done : outcomes) {
        std::vector<std::string> row{done.task.token, done.task.id};
        const int attempt = done.task.attempt;  // the token fences: attempts = attempt - 1
        if (done.verb == Verb::success) {
            for (const auto& name : sql_.placeholders()) {
                auto it = std::find_if(done.values.begin(), done.values.end(),
                                       [&](const auto& kv) { return kv.first == name; });
                row.push_back(it->second);
            }
            success.push_back(std::move(row));
        } else if (done.verb == Verb::extend) {
            row.push_back(micros(done.lease));
            extend.push_back(std::move(row));
        } else if (done.verb == Verb::fail || attempt >= queue_.retry.max_attempts) {
            row.push_back(std::to_string(attempt));
            row.push_back(protocol::clip_reason(done.reason));
            dead.push_back(std::move(row));
        } else {
            Millis delay = done.delay ? protocol::capped_delay(*done.delay, queue_.retry.max_delay)
                                      : retry_backoff(queue_.retry, attempt, jitter(random_));
            row.push_back(std::to_string(attempt));
            row.push_back(protocol::clip_reason(done.reason));
            row.push_back(micros(delay));
            retry.push_back(std::move(row));
        }
    }

    std::unique_ptr<sql::Statement> tx(conn_->createStatement());
    AppliedCounts counts, again;
    retry_lock_conflicts([&] {
        again = {};
        tx->execute("START TRANSACTION");
        try {
            // Not counted: the task's final report is. With claim: redis there is no lease.
            if (queue_.claim == ClaimMode::mysql) update_joined(RowUpdate::extend, extend);
            counts.completed = apply_success(success, again.completed);
            counts.retried = apply_kind(RowUpdate::retry, retry, again.retried);
            counts.dead = apply_kind(RowUpdate::dead, dead, again.dead);
            tx->execute("COMMIT");
        } catch (const sql::SQLException& e) {
            if (!is_connection_error(e)) tx->execute("ROLLBACK");
            throw;
        }
    });
    again.again = again.completed + again.retried + again.dead;
    const auto applied = counts.completed + counts.retried + counts.dead + again.again;
    counts.stale = static_cast<std::int64_t>(success.size() + retry.size() + dead.size()) - applied;
    counts += again;
    return counts;
}

std::vector<ExpiringRow> QueueStore::expiring(const std::string& after, Millis window,
                                              std::int64_t limit) {
    expiring_->setString(1, after);
    expiring_->setString(2, micros(window));
    expiring_->setInt64(3, limit);
    std::unique_ptr<sql::ResultSet> rs(expiring_->executeQuery());
    std::vector<ExpiringRow> rows;
    rows.reserve(rs->rowsCount());
    while (rs->next()) rows.push_back({{rs->getString(1), rs->getString(2)}, rs->getString(3)});
    return rows;
}

std::int64_t QueueStore::renew(const std::vector<ClaimedRow>& rows) {
    std::vector<std::vector<std::string>> values;
    values.reserve(rows.size());
    for (const auto& row : rows) values.push_back({row.token, row.id, micros(queue_.lease)});
    std::int64_t changed = 0;
    retry_lock_conflicts([&] { changed = update_joined(RowUpdate::extend, values); });
    return changed;
}

}  // namespace rowpump
