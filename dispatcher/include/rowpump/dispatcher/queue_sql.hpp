#pragma once

// Every SQL statement rowpump runs against a queue's table, built once from the validated
// config. Identifiers are quoted; values are always `?` parameters.

#include <cstddef>
#include <string>
#include <vector>

#include "rowpump/dispatcher/config.hpp"

namespace rowpump {

class QueueSql {
public:
    explicit QueueSql(const QueueConfig& queue);

    // Before a claim: its lease end (the database clock now plus the lease, as DATETIME(3)),
    // and whether claim_expired() would find a row. A plain read, which takes no locks: the
    // locking claim_expired() runs only when there is something to claim. Params: lease in
    // microseconds.
    const std::string& claim_plan() const { return claim_plan_; }
    // Stamps a claim token and a lease end on up to LIMIT claimable rows.
    // Params: token batch prefix, lease end (from claim_plan), limit.
    const std::string& claim() const { return claim_; }
    // Claims rows whose lease ran out or whose retry backoff has passed, oldest first, through
    // the lease index, wherever they are in the order. Params as claim().
    const std::string& claim_expired() const { return claim_expired_; }
    // The same as claim(), resuming a sweep: only rows at or after a cursor value of the first
    // order_by column (see QueueStore::claim). Params: prefix, lease end, cursor, limit. Empty
    // without order_by.
    const std::string& claim_from() const { return claim_from_; }
    // A batch's ids, tokens and first order_by column (if any), in order_by order, found
    // through the lease index: every row of a batch has the same lease end.
    // Params: lease end, lowest token, bound above all tokens of the batch.
    const std::string& read_back() const { return read_back_; }
    // Gives a batch's claims back (its push failed). Params as read_back.
    const std::string& release() const { return release_; }
    // The claimable-row query for EXPLAIN in `rowpump check`, with LIMIT `batch` inlined.
    const std::string& explain_due() const { return explain_due_; }
    // Counts rows that are due and claimable now (for `rowpump status`).
    const std::string& count_due() const { return count_due_; }

    // Outcome statements join the table with `rows` rows of bound values, each row starting
    // with (token, id). Row layouts:
    //   success: token, id, then one value per on_success placeholder (placeholders() order)
    //   retry:   token, id, attempts, error, delay in microseconds
    //   dead:    token, id, attempts, error
    //   extend:  token, id, lease in microseconds
    std::string success(std::size_t rows) const;
    std::string retry(std::size_t rows) const;
    std::string dead(std::size_t rows) const;
    std::string extend(std::size_t rows) const;

    // Names bound after (token, id) in success rows.
    const std::vector<std::string>& placeholders() const { return placeholders_; }

    // The ALTER TABLE statements that add the bookkeeping columns and the lease index;
    // each is harmless to run twice.
    std::vector<std::string> migrate() const;

    // CLI: dead rows (id, attempts, error, dead_at), newest first. Params: limit.
    const std::string& list_dead() const { return list_dead_; }
    // CLI: revive dead rows. revive_ids(n) takes n ids; revive_all() takes none.
    std::string revive_ids(std::size_t ids) const;
    const std::string& revive_all() const { return revive_all_; }

private:
    std::string join_values(std::size_t rows, const std::vector<std::string>& columns) const;

    const QueueConfig& queue_;
    std::string table_, id_, token_, lease_, attempts_, error_, dead_;
    std::vector<std::string> placeholders_;
    std::string success_set_;
    std::string claim_plan_, claim_, claim_expired_, claim_from_, read_back_, release_, explain_due_, count_due_, list_dead_, revive_all_;
};

}  // namespace rowpump
