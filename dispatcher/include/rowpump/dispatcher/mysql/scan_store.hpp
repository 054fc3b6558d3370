#pragma once

// Claims held in flight (claim: redis, ScanClaim): rows found by a plain read and locked
// through the primary key without a write, each with a fresh token that carries the row's
// version. Over the claim session (MysqlSession).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "rowpump/dispatcher/loop/claim.hpp"
#include "rowpump/dispatcher/mysql/mysql_session.hpp"

namespace sql {
class ResultSet;
}  // namespace sql

namespace rowpump {

class InFlight;
class PassedOverRows;

class ScanStore {
public:
    // Prepares the scan statements on `session`.
    explicit ScanStore(MysqlSession& session);
    ~ScanStore();

    // Reads up to `read_limit` claimable rows after where the last scan stopped, in order, and
    // returns the first `want` of them that `in_flight` does not hold, each with a fresh token;
    // nothing is written. Rows other transactions hold locked are passed over, and reported as
    // ClaimStore::claim reports them.
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

private:
    // A row as lock_scanned() and scan_retried() read it.
    struct ReadRow {
        std::string id;
        std::string token_rest;   // the token but its scan batch
        std::string token_start;  // the first characters of the row's token column
        std::vector<std::optional<std::string>> payload;
    };
    ReadRow read_row(sql::ResultSet& rs) const;
    std::string pick_batch(const std::vector<ReadRow>& rows);  // a token's first part
    std::vector<ClaimedRow> with_tokens(std::vector<ReadRow> rows);
    // Locks what it can of the rows a scan found, skipping rows other transactions hold,
    // and gives each still claimable a fresh token.
    std::vector<ClaimedRow> lock_scanned(const std::vector<std::string>& ids);

    MysqlSession& session_;
    const QueueConfig& queue_;
    std::unique_ptr<sql::PreparedStatement> scan_, scan_from_, scan_retried_;
    std::map<std::size_t, std::unique_ptr<sql::PreparedStatement>> lock_scanned_statements_;
    std::mt19937_64 random_;
    struct ScanCursor {
        std::string id;
        std::optional<std::string> value;  // its first order_by column
    };
    std::optional<ScanCursor> scan_cursor_;  // the last row the last scan looked at
    bool sweeping_from_start_ = true;
    std::unique_ptr<PassedOverRows> passed_over_;
};

}  // namespace rowpump
