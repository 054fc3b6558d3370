#pragma once

// How a queue claims rows, chosen once from its config (make_claim_path): RowClaim writes the
// claim to the row (claim: mysql), ScanClaim holds it in flight (claim: redis). QueueRunner
// calls a path at named hooks of its cycle and knows nothing else of the mode; `rowpump check`
// asks it what to print.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/claim.hpp"
#include "rowpump/dispatcher/mysql/outcome_store.hpp"
#include "rowpump/dispatcher/redis/redis_side.hpp"

namespace rowpump {

class KeyFigures;
class MysqlSession;
class QueueSql;

class ClaimPath {
public:
    virtual ~ClaimPath() = default;

    // The claim session was opened: the path prepares its store on it. close() comes before
    // the session goes (QueueLinks).
    virtual void open(MysqlSession& session) = 0;
    virtual void close() = 0;
    // How outcomes apply to rows claimed this way.
    virtual OutcomeRules outcome_rules() const = 0;

    // On taking the lead: after every connect, leading or not. `took_free`: the lead script
    // ran and found the lock free (it may have lapsed while another pushed). `epoch`: the
    // queue's epoch the lead script saw (RedisSide::Lead), "" when it did not run. A path that
    // kept claims of a push whose outcome is unknown (on_push_unknown) settles them here,
    // before any claim. Throws what RedisSide throws, and sql::SQLException.
    virtual void on_lead(RedisSide& redis, bool leading, bool took_free,
                         const std::string& epoch) = 0;
    // The lock was lost (a push or a trim refused), or the Redis connection dropped.
    virtual void on_lead_lost() = 0;
    virtual void on_redis_lost() = 0;

    // Done messages were just taken from Redis: marks those that must not apply (stale).
    virtual void on_outcomes_taken(std::vector<DoneEntry>& done) = 0;
    // The claim may run beside the outcome transaction (it reads none of the rows the
    // outcomes change, or waits for none of their locks).
    virtual bool claims_beside_outcomes() const = 0;
    // Before a claim, every cycle that gets that far (`capacity` may be 0). `reaped`: tasks
    // taken back from dead workers, not yet applied. Returns how many leases it renewed
    // (counter `renewed`).
    virtual std::int64_t before_claim(RedisSide& redis, std::int64_t capacity,
                                      const std::vector<DoneEntry>& reaped) = 0;
    // Up to `capacity` rows to push, each with its token; valid until the next claim.
    virtual const std::vector<ClaimedRow>& claim(std::int64_t capacity) = 0;
    // The rows of the last claim were pushed.
    virtual void on_pushed() = 0;
    // The push failed once sent (the connection broke, or its reply made no sense): it may
    // have run in Redis, its reply lost. Nothing is given back before Redis, reached again,
    // tells whether it landed (on_lead); a push that landed is never pushed again.
    virtual void on_push_unknown() = 0;
    // The push was refused (the lock or the window): no row reached Redis; gives the claims
    // back, returns how many.
    virtual std::int64_t on_not_pushed() = 0;
    // These outcomes were applied and acknowledged (of the done list, or of tasks taken back).
    virtual void on_outcomes_finished(const std::vector<DoneEntry>& entries) = 0;
    // With rate_per_key (group_by): the keys of `rows` (the last claim) that have a rate, each
    // once with its rows counted, for the push to check and record (RedisSide::push); and
    // what the push said of their windows, in the same order.
    virtual std::vector<KeyRate> key_rates(const std::vector<ClaimedRow>&) { return {}; }
    virtual void on_key_windows(const std::vector<KeyWindow>&) {}

    // For `rowpump check`: the mode and why one would pick the other (docs/semantics.md, "Claims in
    // MySQL or in Redis"), and the statements a claim runs.
    virtual std::string describe() const = 0;
    virtual std::vector<std::string> statements(const QueueSql& sql) const = 0;
};

// `keys`: where a claim with group_by counts its keys' figures (QueueMetrics::keys); may be
// null.
std::unique_ptr<ClaimPath> make_claim_path(const QueueConfig& queue, KeyFigures* keys = nullptr);

}  // namespace rowpump
