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

#include "rowpump/common/protocol.hpp"
#include "rowpump/dispatcher/config.hpp"
#include "rowpump/dispatcher/queue_sql.hpp"

namespace sql {
class Connection;
class PreparedStatement;
}  // namespace sql

namespace rowpump {

struct ClaimedRow {
    std::string id;
    std::string token;
};

// One batch: every row of it has the lease end lease_until and a token in [low, high).
struct Claim {
    std::string low, high;
    std::string lease_until;  // DATETIME(3) text, from the database clock
    std::vector<ClaimedRow> rows;
};

struct AppliedCounts {
    std::int64_t completed = 0;
    std::int64_t retried = 0;
    std::int64_t dead = 0;
    std::int64_t extended = 0;
    std::int64_t stale = 0;  // token no longer matched: the claim had expired or was taken back

    AppliedCounts& operator+=(const AppliedCounts& o);
};

class QueueStore {
public:
    static std::unique_ptr<QueueStore> open(const Config& config, const QueueConfig& queue);
    ~QueueStore();

    // Takes the queue's leader lock (GET_LOCK, held as long as this connection lives).
    // Returns false while another dispatcher holds it.
    [[nodiscard]] bool try_lead();

    // Claims up to `limit` rows and reads them back by lease end and token. First rows whose
    // lease ran out or whose retry backoff passed (through the lease index, and only when a
    // plain read finds some), then due rows in order.
    // With order_by, that second claim sweeps forward from where the last one ended, so
    // the rows still leased at the head of the order are not scanned again by every claim;
    // the sweep starts over when it runs out of due rows.
    [[nodiscard]] Claim claim(std::int64_t limit);
    // The next claim resumes a sweep: it reads rows ahead of every row claimed before it.
    bool resuming_sweep() const { return cursor_.has_value(); }
    // Clears a batch's claims again, for a batch that could not be pushed.
    std::int64_t release(const Claim& claim);

    // Applies outcomes in one transaction, a few statements per batch. Outcomes must be
    // valid for the queue (see check_values). Retries and failures use the token's attempt.
    AppliedCounts apply(const std::vector<protocol::Done>& outcomes);

private:
    enum class Outcome { success, retry, dead, extend };

    QueueStore(const Config& config, const QueueConfig& queue);
    sql::PreparedStatement& outcome_statement(Outcome kind, std::size_t rows);
    std::int64_t update_joined(Outcome kind, const std::vector<std::vector<std::string>>& rows);

    const Config& config_;
    const QueueConfig& queue_;
    QueueSql sql_;
    std::unique_ptr<sql::Connection> conn_;
    struct Plan {
        std::string lease_until;
        bool any_expired = false;
    };
    Plan plan();
    std::int64_t stamp(sql::PreparedStatement& stmt, const std::string& prefix, const std::string& lease_until,
                       const std::optional<std::string>& cursor, std::int64_t limit);

    std::unique_ptr<sql::PreparedStatement> claim_plan_, claim_, claim_expired_, claim_from_, read_back_, release_;
    std::map<std::pair<Outcome, std::size_t>, std::unique_ptr<sql::PreparedStatement>> outcome_statements_;
    std::mt19937_64 random_;
    std::optional<std::string> cursor_;  // first order_by column of the last row swept
};

// "" if the outcome's named values fit the queue's on_success placeholders exactly, else
// what is wrong ("undeclared value 'x' (queue declares: status)").
std::string check_values(const protocol::Done& done, const std::vector<std::string>& declared);

}  // namespace rowpump
