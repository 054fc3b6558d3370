#pragma once

// claim: mysql: the claim is written to the row (token and lease end, ClaimStore), given back
// when its push is refused, or when a push whose outcome was unknown turns out not to have
// landed (UnknownPushes), and its lease renewed while the task is held in Redis (LeaseKeeper).

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/dispatcher/loop/claim_path.hpp"
#include "rowpump/dispatcher/loop/key_limits.hpp"
#include "rowpump/dispatcher/loop/lease_keeper.hpp"
#include "rowpump/dispatcher/loop/unknown_pushes.hpp"
#include "rowpump/dispatcher/mysql/claim_store.hpp"

namespace rowpump {

class RowClaim : public ClaimPath {
public:
    explicit RowClaim(const QueueConfig& queue, KeyFigures* keys = nullptr)
        : queue_(queue), keys_(keys), lease_keeper_(queue), limits_(queue) {}

    void open(MysqlSession& session) override;
    void close() override { store_.reset(); }
    OutcomeRules outcome_rules() const override { return {true, false}; }

    // Settles the pushes whose outcome was unknown: gives back the claims of those that did
    // not land.
    void on_lead(RedisSide& redis, bool, bool, const std::string&) override;
    void on_lead_lost() override {}
    void on_redis_lost() override {}

    void on_outcomes_taken(std::vector<DoneEntry>&) override {}
    // A claim that resumes a sweep reads only rows ahead of all rows claimed, so it can run
    // beside their outcomes; one from the start of the order would wait for (or deadlock with)
    // the outcome transaction.
    bool claims_beside_outcomes() const override { return store_->resuming_sweep(); }
    // Renews the leases running out of tasks still held (LeaseKeeper), when it will claim.
    std::int64_t before_claim(RedisSide& redis, std::int64_t capacity,
                              const std::vector<DoneEntry>& reaped) override;
    const std::vector<ClaimedRow>& claim(std::int64_t capacity) override;
    void on_pushed() override {}
    void on_push_unknown() override { unknown_pushes_.add(claim_); }
    std::int64_t on_not_pushed() override { return store_->release(claim_); }
    void on_outcomes_finished(const std::vector<DoneEntry>&) override {}
    std::vector<KeyRate> key_rates(const std::vector<ClaimedRow>& rows) override;
    void on_key_windows(const std::vector<KeyWindow>& windows) override;

    std::string describe() const override;
    std::vector<std::string> statements(const QueueSql& sql) const override;

private:
    // group_by: reads the key_limits hash again, at most every few seconds; logs what it
    // refused when that changed.
    void load_key_limits(RedisSide& redis);

    const QueueConfig& queue_;
    KeyFigures* keys_;
    std::unique_ptr<ClaimStore> store_;
    LeaseKeeper lease_keeper_;
    Claim claim_;  // the last one
    UnknownPushes unknown_pushes_;
    // group_by: the per-key limits, overrides read from Redis every kKeyLimitsReload
    KeyLimits limits_;
    std::chrono::steady_clock::time_point next_limits_load_{};
    std::vector<std::string> limits_refused_;  // as last logged
    RedisSide* redis_ = nullptr;               // the one before_claim was given last
    std::vector<GroupKey> rated_keys_;         // of the last key_rates()
};

}  // namespace rowpump
