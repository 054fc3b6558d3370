#include "loop/row_claim.hpp"

#include <spdlog/spdlog.h>

#include <map>

#include "rowpump/common/redis/redis.hpp"

#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

namespace {

// How often the leader reads the key_limits hash (an edit takes effect within this).
constexpr std::chrono::seconds kKeyLimitsReload{2};

}  // namespace

void RowClaim::open(MysqlSession& session) {
    store_ = std::make_unique<ClaimStore>(session, keys_);
    if (queue_.group_by.empty()) return;
    // Another dispatcher leads: no window read, the keys asked take no row (rows this claim
    // took already go back when the push is refused by the lock).
    store_->use_key_limits(
        limits_, [this](const std::vector<KeyRate>& keys) { return redis_->push({}, keys).keys; });
}

void RowClaim::load_key_limits(RedisSide& redis) {
    const auto now = std::chrono::steady_clock::now();
    if (queue_.group_by.empty() || now < next_limits_load_) return;
    next_limits_load_ = now + kKeyLimitsReload;
    std::vector<std::string> refused;
    try {
        refused = limits_.load(redis.key_limits(kMaxKeyLimitOverrides));
    } catch (const redis::ReplyError& e) {
        // Not a hash, or too many keys: every key keeps the limits it had.
        refused = {std::string(e.what()) + "; every key keeps the limits it had"};
    }
    if (refused == limits_refused_) return;  // said already
    limits_refused_ = refused;
    for (const auto& why : refused)
        spdlog::warn("queue {}: {}: {}", queue_.label(), redis.keys().key_limits, why);
}

void RowClaim::on_lead(RedisSide& redis, bool, bool, const std::string&) {
    if (!unknown_pushes_.any()) return;
    const auto settled = unknown_pushes_.settle(redis);
    std::int64_t kept = 0, released = 0;
    for (const auto& claim : settled.landed) kept += static_cast<std::int64_t>(claim.rows.size());
    for (const auto& claim : settled.not_landed) released += store_->release(claim);
    unknown_pushes_.clear();
    spdlog::info(
        "queue {}: pushes whose outcome was unknown, as Redis holds them: {} landed ({} claims "
        "kept), {} did not land ({} claims released)",
        queue_.label(), settled.landed.size(), kept, settled.not_landed.size(), released);
}

std::int64_t RowClaim::before_claim(RedisSide& redis, std::int64_t capacity,
                                    const std::vector<DoneEntry>&) {
    redis_ = &redis;
    load_key_limits(redis);
    const auto before = lease_keeper_.renewed();
    if (capacity > 0) lease_keeper_.keep(*store_, redis);
    return lease_keeper_.renewed() - before;
}

const std::vector<ClaimedRow>& RowClaim::claim(std::int64_t capacity) {
    claim_ = store_->claim(capacity, lease_keeper_.horizon());
    return claim_.rows;
}

std::vector<KeyRate> RowClaim::key_rates(const std::vector<ClaimedRow>& rows) {
    rated_keys_.clear();
    if (!limits_.any_rate()) return {};
    std::map<GroupKey, std::int64_t> counts;
    for (const auto& row : rows) {
        if (row.key && limits_.rate(*row.key)) ++counts[*row.key];
    }
    std::vector<KeyRate> keys;
    for (const auto& [key, n] : counts) {
        keys.push_back({key_rate_field(key), *limits_.rate(key), n});
        rated_keys_.push_back(key);
    }
    return keys;
}

void RowClaim::on_key_windows(const std::vector<KeyWindow>& windows) {
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < windows.size() && i < rated_keys_.size(); ++i) {
        if (windows[i].rows_left <= 0) store_->hold_back(rated_keys_[i], now + windows[i].wait);
    }
}

std::string RowClaim::describe() const {
    std::string why = "set in the config";
    if (queue_.key_lines.count("claim") == 0) {
        const char* needs = !queue_.shards.empty()     ? "shards"
                            : !queue_.group_by.empty() ? "group_by"
                                                       : "an order_by of several columns";
        why = std::string("the default for this queue: claim: redis does not work with ") + needs +
              " yet";
    }
    return "claim: mysql (" + why +
           "): each task writes its row twice, claim and outcome, and the row shows its claim "
           "to other programs that read the table. Pick redis for about half the MySQL work "
           "per task";
}

std::vector<std::string> RowClaim::statements(const QueueSql& sql) const {
    if (!queue_.group_by.empty()) {
        std::vector<std::string> grouped = {sql.claim_plan(), sql.claim_expired(), sql.null_key(),
                                            sql.first_key(), sql.key_after()};
        grouped.push_back(sql.grouped_claim(queue_.order_by.empty() ? 0 : 1, 1));
        grouped.push_back(sql.read_back());
        grouped.push_back(sql.in_flight_by_key());
        return grouped;
    }
    return {sql.claim_plan(), sql.claim_expired(), sql.claim(), sql.read_back()};
}

}  // namespace rowpump
