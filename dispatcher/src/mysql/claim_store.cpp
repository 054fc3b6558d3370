#include "rowpump/dispatcher/mysql/claim_store.hpp"

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <cstdio>
#include <stdexcept>

#include "mysql/key_index.hpp"
#include "mysql/passed_over_rows.hpp"
#include "mysql/payload_values.hpp"
#include "mysql/row_locks.hpp"
#include "mysql/statement_rows.hpp"
#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

ClaimStore::ClaimStore(MysqlSession& session, KeyFigures* keys)
    : session_(session),
      queue_(session.queue()),
      random_(std::random_device{}()),
      passed_over_(std::make_unique<PassedOverRows>(session)),
      row_locks_(std::make_unique<RowLocks>(session)),
      own_limits_(session.queue()),
      keys_(keys) {
    const auto& sql = session.sql();
    claim_plan_ = session.prepare(sql.claim_plan());
    claim_ = session.prepare(sql.claim());
    claim_expired_ = session.prepare(sql.claim_expired());
    if (!sql.claim_from().empty()) claim_from_ = session.prepare(sql.claim_from());
    read_back_ = session.prepare(sql.read_back());
    release_ = session.prepare(sql.release());
    expiring_ = session.prepare(sql.expiring());
    clock_ahead_ = session.prepare(sql.clock_ahead());
    if (!queue_.group_by.empty()) {
        null_key_ = session.prepare(sql.null_key());
        first_key_ = session.prepare(sql.first_key());
        key_after_ = session.prepare(sql.key_after());
        // Also for overrides that set a key's concurrency (KeyLimits).
        in_flight_by_key_ = session.prepare(sql.in_flight_by_key());
        key_index_ = find_key_index(session.connection(), queue_);
    }
}

ClaimStore::~ClaimStore() = default;

std::int64_t ClaimStore::stamp(sql::PreparedStatement& stmt, const std::string& lease_horizon,
                               const std::string& prefix, const std::string& lease_until,
                               const std::optional<std::string>& cursor, std::int64_t limit) {
    unsigned index = 1;
    stmt.setString(index++, lease_horizon);
    if (cursor) stmt.setString(index++, *cursor);
    stmt.setInt64(index++, limit);
    stmt.setString(index++, prefix);
    stmt.setString(index, lease_until);
    std::int64_t changed = 0;
    retry_lock_conflicts([&] { changed = stmt.executeUpdate(); });
    return changed;
}

ClaimStore::Plan ClaimStore::plan() {
    claim_plan_->setString(1, micros(queue_.lease));
    std::unique_ptr<sql::ResultSet> rs(claim_plan_->executeQuery());
    if (!rs->next()) throw std::runtime_error("the claim plan query returned no row");
    return {rs->getString(1), rs->getInt(2) == 1};
}

std::string ClaimStore::fresh_batch() {
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
    return batch;
}

Claim ClaimStore::claim(std::int64_t limit, const std::string& lease_horizon) {
    if (!queue_.group_by.empty()) return claim_grouped(limit, lease_horizon);
    // Both statements share a batch prefix and differ in its last hex digit, so one range
    // read-back finds both, and the digit tells swept rows from expired ones.
    const std::string batch = fresh_batch();
    const std::string expired_prefix = batch + "0-", sweep_prefix = batch + "1-";
    const Plan plan = this->plan();
    Claim claim{expired_prefix, batch + "1.", plan.lease_until, {}};  // '.' sorts right after '-'

    const auto expired = plan.any_expired ? stamp(*claim_expired_, lease_horizon, expired_prefix,
                                                  claim.lease_until, std::nullopt, limit)
                                          : 0;
    std::int64_t swept = 0;
    if (expired < limit) {
        const bool resume = cursor_.has_value();
        swept = stamp(resume ? *claim_from_ : *claim_, lease_horizon, sweep_prefix,
                      claim.lease_until, cursor_, limit - expired);
        if (swept < limit - expired) cursor_.reset();  // the sweep reached the end: start over
        // Short, and from the start of the order: every claimable row that nobody held is now ours.
        if (!resume && swept < limit - expired) passed_over_->look(nullptr, &lease_horizon);
    }
    if (expired + swept == 0) return claim;

    read_back_->setString(1, claim.lease_until);
    read_back_->setString(2, claim.low);
    read_back_->setString(3, claim.high);
    std::unique_ptr<sql::ResultSet> rs(read_back_->executeQuery());
    claim.rows.reserve(rs->rowsCount());
    std::optional<std::string> last_swept;
    // After the cursor column and the group_by column, if any.
    const unsigned payload_at =
        (queue_.order_by.empty() ? 4 : 5) + (queue_.group_by.empty() ? 0 : 1);
    while (rs->next()) {
        claim.rows.push_back({rs->getString(1), rs->getString(2),
                              rs->isNull(3)
                                  ? std::nullopt
                                  : std::optional(std::chrono::microseconds(rs->getInt64(3))),
                              read_payload(*rs, payload_at, queue_.payload.size())});
        if (claim_from_ && claim.rows.back().token.rfind(sweep_prefix, 0) == 0) {
            last_swept =
                rs->isNull(4) ? std::nullopt : std::optional<std::string>(rs->getString(4));
        }
    }
    if (claim_from_ && swept == limit - expired && swept > 0) cursor_ = std::move(last_swept);
    return claim;
}

std::int64_t ClaimStore::release(const Claim& claim) {
    release_->setString(1, claim.lease_until);
    release_->setString(2, claim.low);
    release_->setString(3, claim.high);
    return release_->executeUpdate();
}

std::vector<ExpiringRow> ClaimStore::expiring(const std::string& after, Millis window,
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

ClaimStore::Renewal ClaimStore::renew(const std::vector<ClaimedRow>& rows) {
    const auto statement = [this](std::size_t size) -> sql::PreparedStatement& {
        auto& stmt = extend_statements_[size];
        if (!stmt) stmt = session_.prepare(session_.sql().extend(size));
        return *stmt;
    };
    std::vector<std::string> ids;
    ids.reserve(rows.size());
    for (const auto& row : rows) ids.push_back(row.id);
    Renewal renewal;
    std::unique_ptr<sql::Statement> tx(session_.connection().createStatement());
    retry_lock_conflicts([&] {
        renewal = {};
        tx->execute("START TRANSACTION");
        try {
            const auto locks = row_locks_->lock(ids);
            std::vector<std::vector<std::string>> values;
            values.reserve(rows.size());
            for (std::size_t i = 0; i < rows.size(); ++i) {
                if (locks[i] == RowLocks::Row::ours) {
                    values.push_back({rows[i].token, rows[i].id, micros(queue_.lease)});
                } else if (locks[i] == RowLocks::Row::locked) {
                    renewal.locked.push_back(i);
                }
            }
            renewal.renewed =
                for_each_chunk(values, SIZE_MAX, statement,
                               [](sql::PreparedStatement& stmt) { return stmt.executeUpdate(); });
            tx->execute("COMMIT");
        } catch (const sql::SQLException& e) {
            if (!is_connection_error(e)) tx->execute("ROLLBACK");
            throw;
        }
    });
    return renewal;
}

std::string ClaimStore::clock_ahead(Millis ahead) {
    clock_ahead_->setString(1, micros(ahead));
    std::unique_ptr<sql::ResultSet> rs(clock_ahead_->executeQuery());
    if (!rs->next()) throw std::runtime_error("the clock query returned no row");
    return rs->getString(1);
}

}  // namespace rowpump
