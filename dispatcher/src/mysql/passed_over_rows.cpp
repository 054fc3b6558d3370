#include "mysql/passed_over_rows.hpp"

#include <cppconn/resultset.h>
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "rowpump/dispatcher/loop/in_flight.hpp"

namespace rowpump {

namespace {

// How often, at most, a claim looks for rows it passed over (one plain SELECT), and how long
// a row must stay locked before it is reported.
constexpr Millis kLockedRowLook{5000};

}  // namespace

PassedOverRows::PassedOverRows(MysqlSession& session)
    : session_(session),
      passed_over_(session.prepare(session.sql().passed_over())),
      locked_rows_(kLockedRowLook) {}

void PassedOverRows::look(const InFlight* in_flight) {
    const auto now = LockedRowWatch::Clock::now();
    if (!locked_rows_.look_due(now)) return;
    std::vector<std::string> ids;
    passed_over_->setInt64(1, QueueSql::kPassedOverLimit +
                                  static_cast<std::int64_t>(in_flight ? in_flight->size() : 0));
    std::unique_ptr<sql::ResultSet> rs(passed_over_->executeQuery());
    while (rs->next()) {
        auto id = rs->getString(1);
        if (!in_flight || !in_flight->holds(id)) ids.push_back(std::move(id));
    }
    for (const auto& id : locked_rows_.looked(ids, now)) {
        spdlog::warn(
            "queue {}: row {} has been locked by another transaction for {} or more; claims pass "
            "over "
            "it until it is released",
            session_.queue().label(), id, format_duration(locked_rows_.check_every()));
    }
}

}  // namespace rowpump
