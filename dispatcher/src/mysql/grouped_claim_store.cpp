// ClaimStore's claim with group_by: rows from the keys of the ring in turn (KeyRing,
// docs/fairness.md).

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>

#include <algorithm>

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
    // One index dive per key (QueueSql::key_after): a page costs its keys, not the rows.
    const auto& after = ring_.listing_after();
    std::vector<GroupKey> keys;
    std::optional<std::string> last;
    if (!after || !*after) {
        std::unique_ptr<sql::ResultSet> rs(null_key_->executeQuery());
        if (rs->next()) keys.emplace_back();
    } else {
        last = **after;
    }
    while (keys.size() < QueueSql::kKeyRingPage) {
        auto& stmt = last ? *key_after_ : *first_key_;
        if (last) stmt.setString(1, *last);
        std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
        if (!rs->next() || rs->isNull(1)) break;
        last = rs->getString(1);
        keys.emplace_back(*last);
    }
    ring_.listed(std::move(keys));
}

std::map<GroupKey, std::int64_t> ClaimStore::in_flight_by_key() {
    std::unique_ptr<sql::ResultSet> rs(in_flight_by_key_->executeQuery());
    std::map<GroupKey, std::int64_t> counts;
    while (rs->next()) counts[key_at(*rs, 1)] = rs->getInt64(2);
    return counts;
}

void ClaimStore::use_key_limits(const KeyLimits& limits, KeyWindowLook look) {
    limits_ = &limits;
    look_windows_ = std::move(look);
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
    if (!stmt) stmt = session_.prepare(session_.sql().grouped_claim(cursors, firsts, key_index_));
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

void ClaimStore::read_key_windows(std::map<GroupKey, std::int64_t>& rate_left,
                                  std::chrono::steady_clock::time_point now) {
    std::vector<KeyRate> asks;
    std::vector<GroupKey> asked;
    for (auto& key : ring_.upcoming(kKeysPerClaim, now)) {
        if (rate_left.count(key) != 0) continue;
        const auto rate = limits_->rate(key);
        if (!rate) continue;
        asks.push_back({key_rate_field(key), *rate, 0});
        asked.push_back(std::move(key));
    }
    if (asks.empty()) return;
    const auto windows = look_windows_(asks);
    for (std::size_t i = 0; i < asked.size() && i < windows.size(); ++i) {
        rate_left[asked[i]] = windows[i].rows_left;
        // Full: passed over without a read until its window on the Redis clock takes a row.
        if (windows[i].rows_left <= 0) ring_.hold_back(asked[i], now + windows[i].wait);
    }
}

Claim ClaimStore::claim_grouped(std::int64_t limit, const std::string& lease_horizon) {
    const std::string batch = fresh_batch();
    const std::string expired_prefix = batch + "0-", keys_prefix = batch + "1-";
    const Plan plan = this->plan();
    Claim claim{expired_prefix, batch + "1.", plan.lease_until, {}};
    // Per-key limits: each key's rows are read by its own branch, counted, and not claimed
    // first through the lease index (a row of a key at its limit must not enter the claim).
    const bool counted = limits_->any_concurrency();
    const bool rated = limits_->any_rate() && look_windows_;
    const bool limited = counted || rated;
    // Rows whose lease ran out or whose retry backoff passed first, through the lease index,
    // as without group_by. With per-key limits the keys' own reads find them, counted.
    std::int64_t taken = !limited && plan.any_expired
                             ? stamp(*claim_expired_, lease_horizon, expired_prefix,
                                     claim.lease_until, std::nullopt, limit)
                             : 0;
    std::map<GroupKey, std::int64_t> in_flight, rate_left;
    if (counted) in_flight = in_flight_by_key();
    if (counted && keys_) keys_->in_flight(in_flight);
    std::vector<GroupKey> at_limit;  // keys passed over at their limit
    const auto share = [&](const GroupKey& key) -> std::optional<KeyRing::KeyShare> {
        std::int64_t may = limit;
        if (const auto most = limits_->concurrency(key); most > 0) {
            const auto it = in_flight.find(key);
            may = std::max<std::int64_t>(0, most - (it == in_flight.end() ? 0 : it->second));
        }
        if (rated && limits_->rate(key)) {
            const auto it = rate_left.find(key);
            if (it == rate_left.end()) return std::nullopt;  // read with the next keys
            may = std::min(may, it->second);
        }
        if (may <= 0) at_limit.push_back(key);
        return KeyRing::KeyShare{may, limits_->weight(key)};
    };
    std::vector<KeyVisit> visited;
    bool listed = false;
    for (int statement = 0; statement < kGroupedStatements && taken < limit; ++statement) {
        if (ring_.wants_listing()) {
            if (listed) break;  // the ring went round in this claim
            // A ring that holds every key goes round again without a listing for poll.max,
            // and while every key is held back by its rate, until the first may take a row.
            const auto now = std::chrono::steady_clock::now();
            if (const auto held = ring_.all_held_until(now))
                next_listing_ = std::max(next_listing_, *held);
            if (now < next_listing_ && ring_.rewind()) {
                listed = true;  // at most one round per claim all the same
            } else {
                list_keys();
                next_listing_ = now + queue_.poll_max;
                listed = true;
            }
        }
        const auto now = std::chrono::steady_clock::now();
        if (rated) read_key_windows(rate_left, now);
        auto visits = ring_.next_shares(limit - taken, share, now);
        if (visits.empty()) continue;
        taken += stamp_keys(visits, lease_horizon, keys_prefix, claim.lease_until);
        for (auto& visit : visits) {
            // Counted as if each key took its whole share: a key visited again in this claim
            // (after the ring was listed again) stays within its limits.
            if (counted) in_flight[visit.key] += visit.limit;
            if (auto it = rate_left.find(visit.key); it != rate_left.end())
                it->second -= visit.limit;
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
        auto& key = by_key[*claim.rows.back().key];
        ++key.rows;
        if (!queue_.order_by.empty())
            key.last = rs->isNull(4) ? std::nullopt : std::optional<std::string>(rs->getString(4));
    }
    ring_.took(visited, by_key, keep_cursors, idle_until);
    return claim;
}

}  // namespace rowpump
