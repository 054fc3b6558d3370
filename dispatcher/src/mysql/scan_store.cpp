#include "rowpump/dispatcher/mysql/scan_store.hpp"

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "mysql/passed_over_rows.hpp"
#include "mysql/payload_values.hpp"
#include "mysql/statement_rows.hpp"
#include "rowpump/dispatcher/loop/in_flight.hpp"

namespace rowpump {

ScanStore::ScanStore(MysqlSession& session)
    : session_(session),
      queue_(session.queue()),
      random_(std::random_device{}()),
      passed_over_(std::make_unique<PassedOverRows>(session)) {
    scan_ = session.prepare(session.sql().scan());
    scan_from_ = session.prepare(session.sql().scan_from());
    scan_retried_ = session.prepare(session.sql().scan_retried());
}

ScanStore::~ScanStore() = default;

std::string ScanStore::pick_batch(const std::vector<ReadRow>& rows) {
    // The token's first kScanBatchDigits hex digits; lock_scanned() reads the rest. None of
    // the rows' token columns starts with it (a second draw at odds of 2^-32 per row): so a
    // row's token starts with the batch only once an outcome of this read settled it, which
    // is what QueueSql::success_by_id() asks of a row before it applies.
    static_assert(QueueSql::kScanBatchDigits == 8, "a scan batch is 32 random bits");
    for (;;) {
        char batch[16];
        std::snprintf(batch, sizeof batch, "%0*llX", static_cast<int>(QueueSql::kScanBatchDigits),
                      static_cast<unsigned long long>(random_() & 0xFFFFFFFFULL));
        if (std::none_of(rows.begin(), rows.end(),
                         [&](const ReadRow& r) { return r.token_start == batch; }))
            return batch;
    }
}

ScanStore::ReadRow ScanStore::read_row(sql::ResultSet& rs) const {
    // The token but its scan batch, as QueueSql::fence() and success_by_id() read it: the
    // row's version in 8 hex digits, '-', the attempt, '-', the id's checksum in 8 hex digits.
    char rest[40];
    std::snprintf(rest, sizeof rest, "%08llX-%llu-%08llX",
                  static_cast<unsigned long long>(rs.getUInt64(2)),
                  static_cast<unsigned long long>(rs.getUInt64(3)) + 1,
                  static_cast<unsigned long long>(rs.getUInt64(4)));
    return {rs.getString(1), rest, rs.isNull(5) ? "" : std::string(rs.getString(5)),
            read_payload(rs, 6, queue_.payload.size())};
}

std::vector<ClaimedRow> ScanStore::with_tokens(std::vector<ReadRow> rows) {
    const std::string batch = pick_batch(rows);
    std::vector<ClaimedRow> claimed;
    claimed.reserve(rows.size());
    for (auto& r : rows)
        claimed.push_back(
            {std::move(r.id), batch + r.token_rest, std::nullopt, std::move(r.payload)});
    return claimed;
}

std::vector<ClaimedRow> ScanStore::scan_retried(std::int64_t limit, const InFlight& in_flight) {
    scan_retried_->setInt64(1, limit);
    std::unique_ptr<sql::ResultSet> rs(scan_retried_->executeQuery());
    std::vector<ReadRow> rows;
    while (rs->next()) {
        auto row = read_row(*rs);
        if (!in_flight.holds(row.id)) rows.push_back(std::move(row));
    }
    return with_tokens(std::move(rows));
}

ScanStore::ScanPage ScanStore::scan(std::int64_t want, std::int64_t read_limit,
                                    const InFlight& in_flight) {
    auto& stmt = scan_cursor_ ? *scan_from_ : *scan_;
    unsigned index = 1;
    if (scan_cursor_) {
        const auto bind_value = [&] {
            if (scan_cursor_->value) {
                stmt.setString(index++, *scan_cursor_->value);
            } else {
                stmt.setNull(index++, 0);
            }
        };
        if (!queue_.order_by.empty()) {  // (value, value, id[, value]): see QueueSql::scan_from
            bind_value();
            bind_value();
        }
        stmt.setString(index++, scan_cursor_->id);
        if (!queue_.order_by.empty() && !queue_.order_by.front().descending) bind_value();
    }
    stmt.setInt64(index, read_limit);
    std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
    const auto read = static_cast<std::int64_t>(rs->rowsCount());
    std::vector<std::string> found;
    bool wanted_all = false;
    while (rs->next()) {
        if (static_cast<std::int64_t>(found.size()) == want) {
            wanted_all = true;  // the rest of the page is left for the next scan
            break;
        }
        ScanCursor here{rs->getString(1), std::nullopt};
        if (!queue_.order_by.empty() && !rs->isNull(2)) here.value = rs->getString(2);
        if (!in_flight.holds(here.id)) found.push_back(here.id);
        scan_cursor_ = std::move(here);  // the next scan goes on after the last row looked at
    }
    ScanPage page;
    page.rows = lock_scanned(found);
    page.ended = !wanted_all && read < read_limit;
    if (page.ended && sweeping_from_start_) {
        sweeping_from_start_ = false;
        passed_over_->look(&in_flight);
    }
    return page;
}

std::vector<ClaimedRow> ScanStore::lock_scanned(const std::vector<std::string>& ids) {
    std::unordered_map<std::string, ReadRow> locked;
    for_each_statement(ids.size(), [&](std::size_t start, std::size_t n, std::size_t size) {
        auto& stmt = lock_scanned_statements_[size];
        if (!stmt) stmt = session_.prepare(session_.sql().lock_scanned(size));
        for (std::size_t i = 0; i < size; ++i)
            stmt->setString(static_cast<unsigned>(i + 1), ids[start + std::min(i, n - 1)]);
        std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
        while (rs->next()) {
            auto row = read_row(*rs);
            std::string id = row.id;
            locked.emplace(std::move(id), std::move(row));
        }
    });
    // In the scan's order; a row missing was locked by another transaction, or is no longer
    // claimable.
    std::vector<ReadRow> rows;
    rows.reserve(locked.size());
    for (const auto& id : ids) {
        auto it = locked.find(id);
        if (it != locked.end()) rows.push_back(std::move(it->second));
    }
    return with_tokens(std::move(rows));
}

void ScanStore::rescan_from_start() {
    scan_cursor_.reset();
    sweeping_from_start_ = true;
}

}  // namespace rowpump
