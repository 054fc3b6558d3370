#pragma once

// claim: redis: rows are found by a scan and held in flight (InFlight), nothing is written
// to a row before its outcome. The leader learns what is in flight from Redis when it takes
// the lead, adds what it pushes, drops what was applied, and every lease_look_interval drops
// tasks no Redis list holds any more; an outcome of a row that has another task in flight is
// stale.

#include <memory>

#include "rowpump/dispatcher/loop/claim_path.hpp"
#include "rowpump/dispatcher/loop/in_flight.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"
#include "rowpump/dispatcher/mysql/scan_store.hpp"

namespace rowpump {

class ScanClaim : public ClaimPath {
public:
    explicit ScanClaim(const QueueConfig& queue) : queue_(queue) {}

    void open(MysqlSession& session) override { store_ = std::make_unique<ScanStore>(session); }
    void close() override { store_.reset(); }
    OutcomeRules outcome_rules() const override { return {false, true}; }

    // Learns what is in flight as a new leader; a dispatcher that does not lead, or that found
    // its lock free, forgets it.
    void on_lead(RedisSide& redis, bool leading, bool took_free) override;
    void on_lead_lost() override { in_flight_.forget(); }
    void on_redis_lost() override { in_flight_.forget(); }

    void on_outcomes_taken(std::vector<DoneEntry>& done) override;
    // The claim is a read that never waits, and the rows are in flight.
    bool claims_beside_outcomes() const override { return true; }
    // Drops tasks no Redis list holds any more, every lease_look_interval.
    std::int64_t before_claim(RedisSide& redis, std::int64_t capacity,
                              const std::vector<DoneEntry>& reaped) override;
    // The rows to push, claimable and not in flight.
    const std::vector<ClaimedRow>& claim(std::int64_t capacity) override;
    void on_pushed() override { in_flight_.add(rows_); }
    // Nothing was written: nothing to give back. Whether the push landed is learned again
    // from Redis, with everything in flight.
    void on_push_unknown() override { in_flight_.forget(); }
    std::int64_t on_not_pushed() override { return 0; }
    // Tasks whose outcome was applied (or found applied) leave the set; an extend's task is
    // still in hand.
    void on_outcomes_finished(const std::vector<DoneEntry>& entries) override;

    std::string describe() const override;
    std::vector<std::string> statements(const QueueSql& sql) const override;

private:
    const QueueConfig& queue_;
    std::unique_ptr<ScanStore> store_;
    InFlight in_flight_;
    std::vector<ClaimedRow> rows_;  // the last claim
    TimePoint next_audit_{};        // when in_flight_ is next checked against Redis
    TimePoint next_sweep_{};        // when the scan may start over
};

}  // namespace rowpump
