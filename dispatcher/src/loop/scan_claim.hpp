#pragma once

// claim: redis: rows are found by a scan and held in flight (InFlight), nothing is written
// to a row before its outcome. The leader learns what is in flight from Redis when it takes
// the lead, adds what it pushes, drops what was applied, and every lease_look_interval renews
// the lease of the tasks Redis still holds and drops those in no list whose lease ended. An
// outcome applies only to a task in flight with its very token: one of another copy of the
// row, or of a task the dispatcher never issued, is stale.
// The leader keeps what it knows through Redis errors and data loss (its own pushes stay held
// for their lease). A dispatcher that takes the lead without that knowledge after Redis lost
// its data (the queue's epoch changed, RedisSide::Lead) cannot tell which rows were in flight:
// it claims nothing for one lease.
// Every token it issues carries a MAC (TokenMac) keyed with the queue's secret, so that what
// it learns from Redis, which workers can write, is only what a dispatcher issued: a task or
// report made up by a worker is not taken as in flight, and its outcome is stale.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/dispatcher/loop/claim_path.hpp"
#include "rowpump/dispatcher/loop/in_flight.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"
#include "rowpump/dispatcher/loop/token_mac.hpp"
#include "rowpump/dispatcher/mysql/scan_store.hpp"

namespace rowpump {

class ScanClaim : public ClaimPath {
public:
    explicit ScanClaim(const QueueConfig& queue) : queue_(queue) {}

    void open(MysqlSession& session) override { store_ = std::make_unique<ScanStore>(session); }
    void close() override { store_.reset(); }
    OutcomeRules outcome_rules() const override { return {false, true, true}; }

    // Learns what is in flight as a new leader; a dispatcher that does not lead, or that found
    // its lock free, forgets it.
    void on_lead(RedisSide& redis, bool leading, bool took_free, const std::string& epoch) override;
    // What it knows stays until it finds who leads (on_lead).
    void on_lead_lost() override { relearn_ = true; }
    void on_redis_lost() override { relearn_ = true; }

    void on_outcomes_taken(std::vector<DoneEntry>& done) override;
    // The claim is a read that never waits, and the rows are in flight.
    bool claims_beside_outcomes() const override { return true; }
    // Renews the tasks Redis still holds and drops those in no list whose lease ended, every
    // lease_look_interval. Returns 0: no lease in the row is renewed.
    std::int64_t before_claim(RedisSide& redis, std::int64_t capacity,
                              const std::vector<DoneEntry>& reaped) override;
    // The rows to push, claimable and not in flight; none while a new leader waits out a lease.
    const std::vector<ClaimedRow>& claim(std::int64_t capacity) override;
    void on_pushed() override { in_flight_.add(rows_, Clock::now() + queue_.lease); }
    // Nothing was written: nothing to give back. The rows stay in flight until Redis, reached
    // again, tells whether the push landed (on_lead).
    void on_push_unknown() override;
    std::int64_t on_not_pushed() override { return 0; }
    // Tasks whose outcome was applied (or found applied) leave the set; an extend moves its
    // task's lease end.
    void on_outcomes_finished(const std::vector<DoneEntry>& entries) override;

    std::string describe() const override;
    std::vector<std::string> statements(const QueueSql& sql) const override;

private:
    // Reads the queue's secret, then what Redis holds: the tasks whose token verifies.
    std::vector<std::string> held_issued(RedisSide& redis);

    const QueueConfig& queue_;
    std::optional<TokenMac> mac_;  // from the queue's secret, read whenever it learns
    std::unique_ptr<ScanStore> store_;
    InFlight in_flight_;
    std::vector<ClaimedRow> rows_;     // the last claim
    TimePoint next_audit_{};           // when in_flight_ is next checked against Redis
    TimePoint next_sweep_{};           // when the scan may start over
    bool relearn_ = false;             // a Redis error or a refused write: look at Redis again
    std::vector<std::string> unsure_;  // ready messages of pushes whose outcome is unknown
    std::string epoch_;                // the queue's epoch last seen; "" before the first look
    TimePoint wait_out_until_{};       // a new leader after Redis lost data claims nothing till
};

}  // namespace rowpump
