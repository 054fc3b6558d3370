#pragma once

// Claims written to the row (claim: mysql, RowClaim): a token and a lease end stamped on the
// claimed rows, given back when their push fails, and leases renewed while their task is held
// in Redis (LeaseKeeper). Over the claim session (MysqlSession).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rowpump/dispatcher/loop/claim.hpp"
#include "rowpump/dispatcher/loop/key_limits.hpp"
#include "rowpump/dispatcher/loop/key_ring.hpp"
#include "rowpump/dispatcher/mysql/mysql_session.hpp"

namespace rowpump {

class KeyFigures;
class PassedOverRows;
class RowLocks;

class ClaimStore {
public:
    // Prepares the claim statements on `session`. With group_by, a claim counts its keys'
    // tasks in flight and the keys it passed over at their limit in `keys` (when not null).
    explicit ClaimStore(MysqlSession& session, KeyFigures* keys = nullptr);
    ~ClaimStore();

    // Claims up to `limit` rows and reads them back by lease end and token. First rows whose
    // lease ran out or whose retry backoff passed (through the lease index, and only when a
    // plain read finds some), then due rows in order.
    // With order_by, that second claim sweeps forward from where the last one ended, so
    // the rows still leased at the head of the order are not scanned again by every claim;
    // the sweep starts over when it runs out of due rows.
    // Rows other transactions hold locked are passed over; one that stays locked is logged
    // once with its id (see PassedOverRows). Rows whose lease ran out only up to
    // `lease_horizon`, the lease end the lease keeper's last look reached (LeaseKeeper::horizon).
    [[nodiscard]] Claim claim(std::int64_t limit, const std::string& lease_horizon);
    // With group_by the rows come from the keys of the ring in turn (claim_grouped).
    // The next claim resumes a sweep: it reads rows ahead of every row claimed before it.
    bool resuming_sweep() const { return cursor_.has_value(); }
    // With group_by: the per-key limits to follow (else the queue's own, without overrides),
    // and how to read the keys' push windows on the Redis clock (rate_per_key): `look` returns
    // one window per key asked, in order.
    using KeyWindowLook = std::function<std::vector<KeyWindow>(const std::vector<KeyRate>&)>;
    void use_key_limits(const KeyLimits& limits, KeyWindowLook look);
    // rate_per_key: `key` takes no row before `until` (KeyRing::hold_back).
    void hold_back(const GroupKey& key, std::chrono::steady_clock::time_point until) {
        ring_.hold_back(key, until);
    }
    // Clears a batch's claims again, for a batch that could not be pushed.
    std::int64_t release(const Claim& claim);

    // Up to `limit` claimed rows whose lease ends after `after` and within `window` from now,
    // oldest lease first (see LeaseKeeper).
    [[nodiscard]] std::vector<ExpiringRow> expiring(const std::string& after, Millis window,
                                                    std::int64_t limit);
    // Renews the leases of still-claimed rows: the lease ends a full lease from now. Rows
    // whose token no longer matches are left alone, and so are rows another transaction
    // holds locked (RowLocks), which a renewal would wait for.
    struct Renewal {
        std::int64_t renewed = 0;         // how many changed
        std::vector<std::size_t> locked;  // positions in `rows` of rows left alone for a lock
    };
    Renewal renew(const std::vector<ClaimedRow>& rows);
    // The database clock now plus `ahead`, in the lease column's form.
    std::string clock_ahead(Millis ahead);

private:
    struct Plan {
        std::string lease_until;
        bool any_expired = false;
    };
    Plan plan();
    // A fresh batch prefix for a claim's tokens (without its last hex digit).
    std::string fresh_batch();
    // group_by: rows whose lease ran out first (without concurrency_per_key, which counts
    // per key), then up to `limit` rows from the next keys of the ring, a share each, in
    // up to kGroupedStatements statements.
    Claim claim_grouped(std::int64_t limit, const std::string& lease_horizon);
    std::int64_t stamp_keys(const std::vector<KeyVisit>& visits, const std::string& lease_horizon,
                            const std::string& prefix, const std::string& lease_until);
    void list_keys();
    // rate_per_key: the push windows of the next keys with a rate not read in this claim yet,
    // into `rate_left`; holds back the full ones.
    void read_key_windows(std::map<GroupKey, std::int64_t>& rate_left,
                          std::chrono::steady_clock::time_point now);
    std::map<GroupKey, std::int64_t> in_flight_by_key();
    static constexpr int kGroupedStatements = 4;
    static constexpr std::size_t kKeysPerClaim = 100;
    std::int64_t stamp(sql::PreparedStatement& stmt, const std::string& lease_horizon,
                       const std::string& prefix, const std::string& lease_until,
                       const std::optional<std::string>& cursor, std::int64_t limit);

    MysqlSession& session_;
    const QueueConfig& queue_;
    std::unique_ptr<sql::PreparedStatement> claim_plan_, claim_, claim_expired_, claim_from_,
        read_back_, release_, expiring_, clock_ahead_;
    std::map<std::size_t, std::unique_ptr<sql::PreparedStatement>> extend_statements_;
    std::mt19937_64 random_;
    std::optional<std::string> cursor_;  // first order_by column of the last row swept
    std::unique_ptr<PassedOverRows> passed_over_;
    std::unique_ptr<RowLocks> row_locks_;
    // group_by
    std::unique_ptr<sql::PreparedStatement> null_key_, first_key_, key_after_, in_flight_by_key_;
    std::string key_index_;  // the index each key is read through (find_key_index)
    // by (keys read from a cursor, keys read from their first row), each a power of two
    std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<sql::PreparedStatement>>
        grouped_statements_;
    KeyRing ring_{QueueSql::kKeyRingPage, kKeysPerClaim};
    KeyLimits own_limits_;
    const KeyLimits* limits_ = &own_limits_;
    KeyWindowLook look_windows_;
    KeyFigures* keys_;
    std::chrono::steady_clock::time_point next_listing_{};  // of a ring that holds every key
};

}  // namespace rowpump
