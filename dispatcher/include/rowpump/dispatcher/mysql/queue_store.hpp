#pragma once

// The MySQL side of one queue: claims, and outcomes applied in batches. One connection,
// used by one thread. Any sql::SQLException leaves the store unusable: drop it and open a
// new one, which reconnects, re-applies session settings and re-prepares.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/claim.hpp"
#include "rowpump/dispatcher/loop/locked_row_watch.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace sql {
class Connection;
class PreparedStatement;
}  // namespace sql

namespace rowpump {

class InFlight;

struct AppliedCounts {
    std::int64_t completed = 0;
    std::int64_t retried = 0;
    std::int64_t dead = 0;
    std::int64_t stale = 0;  // token no longer matched: the claim had expired or was taken back
    // Of those counted as completed, retried or dead: outcomes found applied already (a
    // dispatcher stopped after committing them, before acknowledging them in Redis).
    std::int64_t again = 0;

    AppliedCounts& operator+=(const AppliedCounts& o);
};

class QueueStore {
public:
    static std::unique_ptr<QueueStore> open(const Config& config, const QueueConfig& queue);
    ~QueueStore();

    // Claims up to `limit` rows and reads them back by lease end and token. First rows whose
    // lease ran out or whose retry backoff passed (through the lease index, and only when a
    // plain read finds some), then due rows in order.
    // With order_by, that second claim sweeps forward from where the last one ended, so
    // the rows still leased at the head of the order are not scanned again by every claim;
    // the sweep starts over when it runs out of due rows.
    // Rows other transactions hold locked are passed over; one that stays locked is logged
    // once with its id (see LockedRowWatch). Rows whose lease ran out only up to
    // `lease_horizon`, the lease end the lease keeper's last look reached (LeaseKeeper::horizon).
    [[nodiscard]] Claim claim(std::int64_t limit, const std::string& lease_horizon);
    // The next claim resumes a sweep: it reads rows ahead of every row claimed before it.
    bool resuming_sweep() const { return cursor_.has_value(); }
    // With claim: redis, instead of claim(): reads up to `read_limit` claimable rows after
    // where the last scan stopped, in order, and returns the first `want` of them that
    // `in_flight` does not hold, each with a fresh token; nothing is written. Rows other
    // transactions hold locked are passed over, and reported as claim() reports them.
    // `ended`: the scan reached the end of the order. The next scan goes on from there, where
    // rows that came due since normally are (new rows, periodic rows with their next time);
    // rescan_from_start() makes it sweep from the start again, through every row in flight.
    struct ScanPage {
        std::vector<ClaimedRow> rows;
        bool ended = false;
    };
    [[nodiscard]] ScanPage scan(std::int64_t want, std::int64_t read_limit,
                                const InFlight& in_flight);
    void rescan_from_start();
    bool sweeping_from_start() const { return sweeping_from_start_; }
    // Up to `limit` rows whose retry delay has passed, each with a fresh token, leaving out
    // those `in_flight` holds.
    [[nodiscard]] std::vector<ClaimedRow> scan_retried(std::int64_t limit,
                                                       const InFlight& in_flight);
    // Clears a batch's claims again, for a batch that could not be pushed.
    std::int64_t release(const Claim& claim);

    // Applies outcomes in one transaction, a few statements per batch. Outcomes must be
    // valid for the queue (see protocol::value_problem). Retries and failures use the token's
    // attempt. An outcome that was applied before (its row holds the settled token of its
    // claim) is counted as what it was, not as stale, and changes nothing.
    AppliedCounts apply(const std::vector<protocol::Done>& outcomes);

    // Up to `limit` claimed rows whose lease ends after `after` and within `window` from now,
    // oldest lease first (see LeaseKeeper).
    [[nodiscard]] std::vector<ExpiringRow> expiring(const std::string& after, Millis window,
                                                    std::int64_t limit);
    // Renews the leases of still-claimed rows: the lease ends a full lease from now. Rows
    // whose token no longer matches are left alone. Returns how many changed.
    std::int64_t renew(const std::vector<ClaimedRow>& rows);
    // The database clock now plus `ahead`, in the lease column's form.
    std::string clock_ahead(Millis ahead);

private:
    // Which UPDATE a report becomes: a retry past max_attempts is a dead update, like a fail.
    // (settled is no update: it counts rows that hold the settled token of a claim.)
    enum class RowUpdate { success, retry, dead, extend, settled };

    QueueStore(const Config& config, const QueueConfig& queue);
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
    // Successes; with claim: redis, those that share their scan batch and values go by
    // primary key (QueueSql::success_by_id), in groups of at least kSuccessByIdMin.
    std::int64_t apply_success(const std::vector<std::vector<std::string>>& rows,
                               std::int64_t& already);
    std::int64_t update_by_id(const std::vector<const std::vector<std::string>*>& rows);
    std::map<std::size_t, std::unique_ptr<sql::PreparedStatement>> success_by_id_statements_;
    // How many of `rows` (token, id, ...) hold the settled token of their claim.
    std::int64_t count_settled(const std::vector<std::vector<std::string>>& rows);

    const Config& config_;
    const QueueConfig& queue_;
    QueueSql sql_;
    std::unique_ptr<sql::Connection> conn_;
    struct Plan {
        std::string lease_until;
        bool any_expired = false;
    };
    Plan plan();
    std::int64_t stamp(sql::PreparedStatement& stmt, const std::string& lease_horizon,
                       const std::string& prefix, const std::string& lease_until,
                       const std::optional<std::string>& cursor, std::int64_t limit);

    // `in_flight` (claim: redis): rows in flight are claimable, and not locked.
    void look_for_locked_rows(const InFlight* in_flight = nullptr);

    std::unique_ptr<sql::PreparedStatement> claim_plan_, claim_, claim_expired_, claim_from_,
        passed_over_, read_back_, release_, expiring_, clock_ahead_;
    std::map<std::pair<RowUpdate, std::size_t>, std::unique_ptr<sql::PreparedStatement>>
        outcome_statements_;
    std::mt19937_64 random_;
    std::optional<std::string> cursor_;  // first order_by column of the last row swept
    std::unique_ptr<sql::PreparedStatement> scan_, scan_from_, scan_retried_;
    std::string fresh_batch();  // a token's first part, for scanned rows
    // Locks what it can of the rows a scan found, skipping rows other transactions hold,
    // and gives each still claimable a fresh token.
    std::vector<ClaimedRow> lock_scanned(const std::vector<std::string>& ids);
    std::map<std::size_t, std::unique_ptr<sql::PreparedStatement>> lock_scanned_statements_;
    struct ScanCursor {
        std::string id;
        std::optional<std::string> value;  // its first order_by column
    };
    std::optional<ScanCursor> scan_cursor_;  // the last row the last scan looked at
    bool sweeping_from_start_ = true;
    LockedRowWatch locked_rows_;
};

}  // namespace rowpump
