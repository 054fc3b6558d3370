#include "rowpump/dispatcher/mysql/outcome_store.hpp"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "mysql/row_locks.hpp"
#include "mysql/statement_rows.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"
#include "rowpump/dispatcher/loop/token_mac.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"
#include "rowpump/dispatcher/mysql/server_dialect.hpp"

namespace rowpump {

namespace {

// Smaller groups of equal successes are joined with the rest: a statement per group would
// cost more than it saves.
constexpr std::size_t kSuccessByIdMin = 16;

// After a batch met a row another transaction holds, the batches lock their rows first for
// this long: the row's outcome is tried again each cycle, and while the row stays held a batch
// that wrote without the locking read would fail on it each time.
constexpr std::chrono::seconds kLockFirstFor{5};

// What QueueSql::success_by_id() fences a scan token's row with: the token's version digits
// as a number and the row's attempts when it was read (the token's attempt minus one);
// nullopt for a token that is not a scan token: `<batch><version>-<attempt>-<id checksum>`.
struct ScanFence {
    std::int64_t version;
    std::int64_t attempts;
};
std::optional<ScanFence> scan_fence(std::string_view token) {
    constexpr std::size_t at = QueueSql::kScanBatchDigits, digits = 8;
    if (token.size() <= at + digits + 1 || token[at + digits] != '-') return std::nullopt;
    const char* const end = token.data() + token.size();
    std::uint32_t version = 0;
    const char* version_end = token.data() + at + digits;
    if (auto r = std::from_chars(token.data() + at, version_end, version, 16);
        r.ec != std::errc() || r.ptr != version_end)
        return std::nullopt;
    std::uint64_t attempt = 0;
    const auto r = std::from_chars(version_end + 1, end, attempt);
    if (r.ec != std::errc() || attempt == 0 || r.ptr == end || *r.ptr != '-') return std::nullopt;
    if (attempt > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
    return ScanFence{version, static_cast<std::int64_t>(attempt) - 1};
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

OutcomeStore::OutcomeStore(MysqlSession& session, OutcomeRules rules)
    : session_(session),
      dialect_(server_dialect(session.connection())),
      writes_without_wait_(!dialect_.without_lock_wait("UPDATE").empty()),
      row_locks_(std::make_unique<RowLocks>(session)),
      queue_(session.queue()),
      sql_(session.sql()),
      rules_(rules),
      random_(std::random_device{}()) {}

OutcomeStore::~OutcomeStore() = default;

std::string OutcomeStore::outcome_sql(RowUpdate kind, std::size_t rows) const {
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

sql::PreparedStatement& OutcomeStore::outcome_statement(RowUpdate kind, std::size_t rows) {
    const bool without_wait = without_wait_ && kind != RowUpdate::settled;
    auto& stmt = outcome_statements_[{kind, rows, without_wait}];
    if (!stmt) {
        const auto text = outcome_sql(kind, rows);
        stmt = session_.prepare(without_wait ? dialect_.without_lock_wait(text) : text);
    }
    return *stmt;
}

template <typename Run>
std::int64_t OutcomeStore::for_each_chunk(RowUpdate kind,
                                          const std::vector<std::vector<std::string>>& rows,
                                          std::size_t columns, Run&& run) {
    return rowpump::for_each_chunk(
        rows, columns,
        [&](std::size_t size) -> sql::PreparedStatement& { return outcome_statement(kind, size); },
        run);
}

std::int64_t OutcomeStore::update_joined(RowUpdate kind,
                                         const std::vector<std::vector<std::string>>& rows) {
    return for_each_chunk(kind, rows, SIZE_MAX,
                          [](sql::PreparedStatement& stmt) { return stmt.executeUpdate(); });
}

std::int64_t OutcomeStore::count_settled(const std::vector<std::vector<std::string>>& rows) {
    // Only (token, id) of each row; COUNT(DISTINCT id) ignores the repeated last row.
    return for_each_chunk(RowUpdate::settled, rows, 2, [](sql::PreparedStatement& stmt) {
        std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
        return rs->next() ? rs->getInt64(1) : 0;
    });
}

std::int64_t OutcomeStore::apply_kind(RowUpdate kind,
                                      const std::vector<std::vector<std::string>>& rows,
                                      std::int64_t& already) {
    const auto changed = update_joined(kind, rows);
    // Rows applied just now hold the settled token too; the rest of those that do had it
    // before this batch. Looked up only when some outcome did not apply.
    if (changed < static_cast<std::int64_t>(rows.size())) already += count_settled(rows) - changed;
    return changed;
}

std::int64_t OutcomeStore::apply_success(const std::vector<std::vector<std::string>>& rows,
                                         std::int64_t& already) {
    if (!rules_.success_by_id) return apply_kind(RowUpdate::success, rows, already);
    // Group by scan batch and values: rows are (token, id, values in placeholders() order).
    // A token that is not a scan token is joined (and found stale there).
    std::map<std::vector<std::string>, std::vector<const std::vector<std::string>*>> groups;
    std::vector<std::vector<std::string>> joined;
    for (const auto& row : rows) {
        if (!scan_fence(row[0])) {
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

std::int64_t OutcomeStore::update_by_id(const std::vector<const std::vector<std::string>*>& rows) {
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
        auto& stmt = success_by_id_statements_[{size, without_wait_}];
        if (!stmt) {
            const auto text = sql_.success_by_id(size);
            stmt = session_.prepare(without_wait_ ? dialect_.without_lock_wait(text) : text);
        }
        const auto row = [&](std::size_t i) -> const auto& {
            return *rows[start + std::min(i, n - 1)];
        };
        unsigned index = 1;
        for (const auto& value : values) stmt->setString(index++, value);
        stmt->setString(index++, batch);
        for (std::size_t i = 0; i < size; ++i) {
            const auto fence = scan_fence(row(i)[0]);  // apply_success() grouped only these
            stmt->setString(index++, row(i)[1]);
            stmt->setInt64(index++, fence->version);
            stmt->setInt64(index++, fence->attempts);
        }
        stmt->setString(index, batch);
        total += stmt->executeUpdate();
    });
    return total;
}

bool OutcomeStore::lock_first() const {
    return !writes_without_wait_ || std::chrono::steady_clock::now() < lock_first_until_;
}

AppliedCounts OutcomeStore::apply(const std::vector<protocol::Done>& outcomes) {
    AppliedCounts counts;
    retry_lock_conflicts([&] {
        counts = {};
        if (!lock_first()) {
            // Most batches meet no row another transaction holds: then the writes alone do
            // what the locking read and the writes would. A held row the writes read fails
            // the batch at once (without_lock_wait), which is rolled back and applied again,
            // locking first.
            try {
                apply_batch(outcomes, false, counts);
                return;
            } catch (const sql::SQLException& e) {
                if (!is_lock_conflict(e)) throw;
                counts = {};
                lock_first_until_ = std::chrono::steady_clock::now() + kLockFirstFor;
            }
        }
        apply_batch(outcomes, true, counts);
        if (!counts.locked.empty())
            lock_first_until_ = std::chrono::steady_clock::now() + kLockFirstFor;
    });
    return counts;
}

void OutcomeStore::apply_batch(const std::vector<protocol::Done>& outcomes, bool lock_first,
                               AppliedCounts& counts) {
    without_wait_ = !lock_first;
    std::unique_ptr<sql::Statement> tx(session_.connection().createStatement());
    tx->execute("START TRANSACTION");
    try {
        std::vector<std::string> ids;
        ids.reserve(outcomes.size());
        for (const auto& done : outcomes) ids.push_back(done.task.id);
        // Without the locking read, a row that is gone is found by its write changing nothing,
        // and counted stale as any outcome that does not apply.
        const auto rows = lock_first ? row_locks_->lock(ids)
                                     : std::vector<RowLocks::Row>(ids.size(), RowLocks::Row::ours);
        std::vector<std::vector<std::string>> success, retry, dead, extend;
        std::uniform_real_distribution<double> jitter(0.0, 1.0);
        std::int64_t gone = 0;
        for (std::size_t i = 0; i < outcomes.size(); ++i) {
            const auto& done = outcomes[i];
            if (rows[i] != RowLocks::Row::ours) {
                if (rows[i] == RowLocks::Row::locked) {
                    counts.locked.push_back(i);
                } else if (done.verb != Verb::extend) {
                    ++gone;  // stale: no row to apply it to
                }
                continue;
            }
            const auto token =
                rules_.sealed_tokens ? TokenMac::unsealed(done.task.token) : done.task.token;
            std::vector<std::string> row{std::string(token), done.task.id};
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
                Millis delay = done.delay
                                   ? protocol::capped_delay(*done.delay, queue_.retry.max_delay)
                                   : retry_backoff(queue_.retry, attempt, jitter(random_));
                row.push_back(std::to_string(attempt));
                row.push_back(protocol::clip_reason(done.reason));
                row.push_back(micros(delay));
                retry.push_back(std::move(row));
            }
        }
        // Not counted: the task's final report is. With claim: redis there is no lease.
        AppliedCounts again;
        if (rules_.extends_lease) update_joined(RowUpdate::extend, extend);
        counts.completed = apply_success(success, again.completed);
        counts.retried = apply_kind(RowUpdate::retry, retry, again.retried);
        counts.dead = apply_kind(RowUpdate::dead, dead, again.dead);
        tx->execute("COMMIT");
        again.again = again.completed + again.retried + again.dead;
        const auto applied = counts.completed + counts.retried + counts.dead + again.again;
        counts.stale =
            static_cast<std::int64_t>(success.size() + retry.size() + dead.size()) - applied + gone;
        counts += again;
    } catch (const sql::SQLException& e) {
        if (!is_connection_error(e)) tx->execute("ROLLBACK");
        throw;
    }
}

}  // namespace rowpump
