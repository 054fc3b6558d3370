#pragma once

// Outcomes applied to the rows in batches, over one MySQL session (MysqlSession): the done
// list's on a session of their own, so that they run beside a claim, and those of tasks taken
// back from dead workers on the claim session.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "rowpump/dispatcher/loop/outcomes.hpp"
#include "rowpump/dispatcher/mysql/mysql_session.hpp"
#include "rowpump/dispatcher/sql/dialect.hpp"

namespace rowpump {

class RowLocks;

// How outcomes apply on a claim path (ClaimPath::outcome_rules).
struct OutcomeRules {
    // An `extend` report moves the row's lease end (the claim is written to the row).
    bool extends_lease = true;
    // Successes that share their scan batch and values go by primary key
    // (QueueSql::success_by_id), in groups of at least kSuccessByIdMin.
    bool success_by_id = false;
    // Tokens end with a MAC (TokenMac, claim: redis) the row never sees: taken off first.
    bool sealed_tokens = false;
};

class OutcomeStore : public Outcomes {
public:
    OutcomeStore(MysqlSession& session, OutcomeRules rules);
    ~OutcomeStore() override;

    AppliedCounts apply(const std::vector<protocol::Done>& outcomes) override;

private:
    // Which UPDATE a report becomes: a retry past max_attempts is a dead update, like a fail.
    // (settled is no update: it counts rows that hold the settled token of a claim.)
    enum class RowUpdate { success, retry, dead, extend, settled };

    std::string outcome_sql(RowUpdate kind, std::size_t rows) const;
    sql::PreparedStatement& outcome_statement(RowUpdate kind, std::size_t rows);
    // Binds `rows` to the kind's statements, a chunk at a time, the first `columns` values
    // of each row, and sums what `run` returns for each chunk.
    template <typename Run>
    std::int64_t for_each_chunk(RowUpdate kind, const std::vector<std::vector<std::string>>& rows,
                                std::size_t columns, Run&& run);
    std::int64_t update_joined(RowUpdate kind, const std::vector<std::vector<std::string>>& rows);
    // Applies one kind of outcome; those applied before are added to `already`.
    std::int64_t apply_kind(RowUpdate kind, const std::vector<std::vector<std::string>>& rows,
                            std::int64_t& already);
    // Successes; with rules_.success_by_id, those that share their scan batch and values go
    // by primary key.
    std::int64_t apply_success(const std::vector<std::vector<std::string>>& rows,
                               std::int64_t& already);
    std::int64_t update_by_id(const std::vector<const std::vector<std::string>*>& rows);
    // How many of `rows` (token, id, ...) hold the settled token of their claim.
    std::int64_t count_settled(const std::vector<std::vector<std::string>>& rows);
    // In one transaction: with `lock_first`, locks the outcomes' rows (RowLocks) and applies
    // those whose row it holds; the others are listed in `counts.locked` (another transaction
    // holds the row) or counted stale (the row is gone). Without, writes to every row at once,
    // and a row another transaction holds fails the batch (writes_without_wait_).
    void apply_batch(const std::vector<protocol::Done>& outcomes, bool lock_first,
                     AppliedCounts& counts);
    // Whether the next batch locks its rows first: always on MySQL, and for kLockFirstFor
    // after a batch met a row another transaction holds.
    bool lock_first() const;

    MysqlSession& session_;
    const Dialect dialect_;
    // The outcome writes fail at once on a row another transaction holds (MariaDB), so that a
    // batch can skip the locking read and fall back to it only when a row is held.
    const bool writes_without_wait_;
    std::chrono::steady_clock::time_point lock_first_until_{};
    std::unique_ptr<RowLocks> row_locks_;
    const QueueConfig& queue_;
    const QueueSql& sql_;
    const OutcomeRules rules_;
    // The batch being applied writes without the locking read: its writes fail at once on a
    // held row. The batches that lock first write with the session's lock wait, as a write
    // that reads past a row another transaction holds (a scan of a small table) reads its
    // last committed version then, and fails at once without it.
    bool without_wait_ = false;
    // By kind and size, and whether they write without waiting.
    std::map<std::tuple<RowUpdate, std::size_t, bool>, std::unique_ptr<sql::PreparedStatement>>
        outcome_statements_;
    std::map<std::pair<std::size_t, bool>, std::unique_ptr<sql::PreparedStatement>>
        success_by_id_statements_;
    std::mt19937_64 random_;
};

}  // namespace rowpump
