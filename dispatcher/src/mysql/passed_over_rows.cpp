#include "mysql/passed_over_rows.hpp"

#include <cppconn/resultset.h>
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "rowpump/common/log_text.hpp"
#include "rowpump/dispatcher/loop/in_flight.hpp"

namespace rowpump {

PassedOverRows::PassedOverRows(MysqlSession& session)
    : session_(session),
      passed_over_(session.prepare(session.sql().passed_over())),
      locked_rows_(kLockedRowCheck) {}

void PassedOverRows::look(const InFlight* in_flight, const std::string* lease_horizon) {
    const auto now = LockedRowWatch::Clock::now();
    if (!locked_rows_.look_due(now)) return;
    std::vector<std::string> ids;
    unsigned index = 1;
    if (lease_horizon) passed_over_->setString(index++, *lease_horizon);
    passed_over_->setInt64(index, QueueSql::kPassedOverLimit +
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
            session_.queue().label(), log_text(id), format_duration(locked_rows_.check_every()));
    }
}

}  // namespace rowpump
