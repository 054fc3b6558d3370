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

std::string ScanStore::fresh_batch() {
    // The token's first kScanBatchDigits hex digits; lock_scanned() reads the rest.
    static_assert(QueueSql::kScanBatchDigits == 8, "a scan batch is 32 random bits");
    char batch[16];
    std::snprintf(batch, sizeof batch, "%0*llX", static_cast<int>(QueueSql::kScanBatchDigits),
                  static_cast<unsigned long long>(random_() & 0xFFFFFFFFULL));
    return batch;
}

std::vector<ClaimedRow> ScanStore::scan_retried(std::int64_t limit, const InFlight& in_flight) {
    const std::string batch = fresh_batch();
    scan_retried_->setInt64(1, limit);
    std::unique_ptr<sql::ResultSet> rs(scan_retried_->executeQuery());
    std::vector<ClaimedRow> rows;
    while (rs->next()) {
        auto id = rs->getString(1);
        if (!in_flight.holds(id)) {
            rows.push_back({std::move(id), batch + rs->getString(2), std::nullopt,
                            read_payload(*rs, 3, queue_.payload.size())});
        }
    }
    return rows;
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
    std::unordered_map<std::string, ClaimedRow> locked;
    const std::string batch = fresh_batch();
    for_each_statement(ids.size(), [&](std::size_t start, std::size_t n, std::size_t size) {
        auto& stmt = lock_scanned_statements_[size];
        if (!stmt) stmt = session_.prepare(session_.sql().lock_scanned(size));
        for (std::size_t i = 0; i < size; ++i)
            stmt->setString(static_cast<unsigned>(i + 1), ids[start + std::min(i, n - 1)]);
        std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
        while (rs->next()) {
            std::string id = rs->getString(1);
            locked.emplace(id, ClaimedRow{id, batch + rs->getString(2), std::nullopt,
                                          read_payload(*rs, 3, queue_.payload.size())});
        }
    });
    // In the scan's order; a row missing was locked by another transaction, or is no longer
    // claimable.
    std::vector<ClaimedRow> rows;
    rows.reserve(locked.size());
    for (const auto& id : ids) {
        auto it = locked.find(id);
        if (it != locked.end()) rows.push_back(std::move(it->second));
    }
    return rows;
}

void ScanStore::rescan_from_start() {
    scan_cursor_.reset();
    sweeping_from_start_ = true;
}

}  // namespace rowpump
