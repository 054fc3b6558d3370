// ClaimStore's claim with group_by: rows from the keys of the ring in turn (KeyRing,
// docs/fairness.md).

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>

#include "mysql/payload_values.hpp"
#include "rowpump/dispatcher/mysql/claim_store.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"
#include "rowpump/dispatcher/observe/key_figures.hpp"

namespace rowpump {

namespace {

void bind_key(sql::PreparedStatement& stmt, unsigned index, const GroupKey& key) {
    if (key) {
        stmt.setString(index, *key);
    } else {
        stmt.setNull(index, 0);
    }
}

GroupKey key_at(sql::ResultSet& rs, unsigned column) {
    return rs.isNull(column) ? GroupKey() : GroupKey(rs.getString(column));
}

}  // namespace

void ClaimStore::list_keys() {
    const auto& after = ring_.listing_after();
    const bool from_start = !after || !*after;
    auto& stmt = from_start ? *list_keys_ : *list_keys_after_;
    const unsigned index = 1;
    if (!from_start) stmt.setString(index, **after);
    std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
    std::vector<GroupKey> keys;
    keys.reserve(rs->rowsCount());
    while (rs->next()) keys.push_back(key_at(*rs, 1));
    ring_.listed(std::move(keys));
}

std::map<GroupKey, std::int64_t> ClaimStore::in_flight_by_key() {
    std::unique_ptr<sql::ResultSet> rs(in_flight_by_key_->executeQuery());
    std::map<GroupKey, std::int64_t> counts;
    while (rs->next()) counts[key_at(*rs, 1)] = rs->getInt64(2);
    return counts;
}

std::int64_t ClaimStore::stamp_keys(const std::vector<KeyVisit>& visits,
                                    const std::string& lease_horizon, const std::string& prefix,
                                    const std::string& lease_until) {
    // Keys that go on from a cursor first, then those read from their first row; one
    // statement per power of two of each: the branches past the visits read no row.
    std::vector<const KeyVisit*> from_cursor, from_first;
    for (const auto& visit : visits) {
        (visit.cursor && !queue_.order_by.empty() ? from_cursor : from_first).push_back(&visit);
    }
    const auto padded = [](std::size_t n) {
        std::size_t size = n == 0 ? 0 : 1;
        while (size < n) size *= 2;
        return size;
    };
    const std::size_t cursors = padded(from_cursor.size()), firsts = padded(from_first.size());
    auto& stmt = grouped_statements_[{cursors, firsts}];
    if (!stmt) stmt = session_.prepare(session_.sql().grouped_claim(cursors, firsts));
    unsigned index = 1;
    const auto bind = [&](const std::vector<const KeyVisit*>& group, std::size_t size) {
        for (std::size_t i = 0; i < size; ++i) {
            const auto& visit = *group[std::min(i, group.size() - 1)];
            bind_key(*stmt, index++, visit.key);
            stmt->setString(index++, lease_horizon);
            if (&group == &from_cursor) stmt->setString(index++, *visit.cursor);
            stmt->setInt64(index++, i < group.size() ? visit.limit : 0);
        }
    };
    bind(from_cursor, cursors);
    bind(from_first, firsts);
    stmt->setString(index++, prefix);
    stmt->setString(index, lease_until);
    std::int64_t changed = 0;
    retry_lock_conflicts([&] { changed = stmt->executeUpdate(); });
    return changed;
}

Claim ClaimStore::claim_grouped(std::int64_t limit, const std::string& lease_horizon) {
    const std::string batch = fresh_batch();
    const std::string expired_prefix = batch + "0-", keys_prefix = batch + "1-";
    const Plan plan = this->plan();
    Claim claim{expired_prefix, batch + "1.", plan.lease_until, {}};
    const bool limited = queue_.concurrency_per_key > 0;
    // Rows whose lease ran out or whose retry backoff passed first, through the lease index,
    // as without group_by. With concurrency_per_key the keys' own reads find them, counted.
    std::int64_t taken = !limited && plan.any_expired
                             ? stamp(*claim_expired_, lease_horizon, expired_prefix,
                                     claim.lease_until, std::nullopt, limit)
                             : 0;
    std::map<GroupKey, std::int64_t> in_flight;
    if (limited) in_flight = in_flight_by_key();
    if (limited && keys_) keys_->in_flight(in_flight);
    std::vector<GroupKey> at_limit;  // keys passed over at their limit
    const auto allowance = [&](const GroupKey& key) -> std::int64_t {
        if (!limited) return limit;
        const auto it = in_flight.find(key);
        const auto may = queue_.concurrency_per_key - (it == in_flight.end() ? 0 : it->second);
        if (may <= 0) at_limit.push_back(key);
        return may;
    };
    std::vector<KeyVisit> visited;
    bool listed = false;
    for (int statement = 0; statement < kGroupedStatements && taken < limit; ++statement) {
        if (ring_.wants_listing()) {
            if (listed) break;  // the ring went round in this claim
            // A ring that holds every key goes round again without a listing for poll.max.
            const auto now = std::chrono::steady_clock::now();
            if (now < next_listing_ && ring_.rewind()) {
                listed = true;  // at most one round per claim all the same
            } else {
                list_keys();
                next_listing_ = now + queue_.poll_max;
                listed = true;
            }
        }
        auto visits = ring_.next(limit - taken, allowance, std::chrono::steady_clock::now());
        if (visits.empty()) continue;
        taken += stamp_keys(visits, lease_horizon, keys_prefix, claim.lease_until);
        for (auto& visit : visits) {
            // Counted as if each key took its whole share: a key visited again in this claim
            // (after the ring was listed again) stays within its limit.
            if (limited) in_flight[visit.key] += visit.limit;
            visited.push_back(std::move(visit));
        }
    }
    if (keys_ && !at_limit.empty()) keys_->passed_over(at_limit);
    const bool keep_cursors = !limited && !queue_.order_by.empty();
    // A key without due rows is passed over for poll.max, as an idle queue polls.
    const auto idle_until = std::chrono::steady_clock::now() + queue_.poll_max;
    if (taken == 0) {
        ring_.took(visited, {}, keep_cursors, idle_until);
        return claim;
    }

    read_back_->setString(1, claim.lease_until);
    read_back_->setString(2, claim.low);
    read_back_->setString(3, claim.high);
    std::unique_ptr<sql::ResultSet> rs(read_back_->executeQuery());
    claim.rows.reserve(rs->rowsCount());
    const unsigned key_column = queue_.order_by.empty() ? 4 : 5;
    std::map<GroupKey, KeyTaken> by_key;
    while (rs->next()) {
        claim.rows.push_back(
            {rs->getString(1), rs->getString(2),
             rs->isNull(3) ? std::nullopt
                           : std::optional(std::chrono::microseconds(rs->getInt64(3))),
             read_payload(*rs, key_column + 1, queue_.payload.size()), key_at(*rs, key_column)});
        if (claim.rows.back().token.rfind(keys_prefix, 0) != 0) continue;
        auto& key = by_key[*claim.rows.back().group_key];
        ++key.rows;
        if (!queue_.order_by.empty())
            key.last = rs->isNull(4) ? std::nullopt : std::optional<std::string>(rs->getString(4));
    }
    ring_.took(visited, by_key, keep_cursors, idle_until);
    return claim;
}

}  // namespace rowpump
