#include "loop/row_claim.hpp"

#include <spdlog/spdlog.h>

#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

void RowClaim::on_lead(RedisSide& redis, bool, bool, const std::string&) {
    if (!unknown_pushes_.any()) return;
    const auto settled = unknown_pushes_.settle(redis);
    std::int64_t kept = 0, released = 0;
    for (const auto& claim : settled.landed) kept += static_cast<std::int64_t>(claim.rows.size());
    for (const auto& claim : settled.not_landed) released += store_->release(claim);
    unknown_pushes_.clear();
    spdlog::info(
        "queue {}: pushes whose outcome was unknown, as Redis holds them: {} landed ({} claims "
        "kept), {} did not land ({} claims released)",
        queue_.label(), settled.landed.size(), kept, settled.not_landed.size(), released);
}

std::int64_t RowClaim::before_claim(RedisSide& redis, std::int64_t capacity,
                                    const std::vector<DoneEntry>&) {
    const auto before = lease_keeper_.renewed();
    if (capacity > 0) lease_keeper_.keep(*store_, redis);
    return lease_keeper_.renewed() - before;
}

const std::vector<ClaimedRow>& RowClaim::claim(std::int64_t capacity) {
    claim_ = store_->claim(capacity, lease_keeper_.horizon());
    return claim_.rows;
}

std::string RowClaim::describe() const {
    std::string why = "set in the config";
    if (queue_.key_lines.count("claim") == 0) {
        const char* needs = !queue_.shards.empty()     ? "shards"
                            : !queue_.group_by.empty() ? "group_by"
                                                       : "an order_by of several columns";
        why = std::string("the default for this queue: claim: redis does not work with ") + needs +
              " yet";
    }
    return "claim: mysql (" + why +
           "): each task writes its row twice, claim and outcome, and the row shows its claim "
           "to other programs that read the table. Pick redis for about half the MySQL work "
           "per task";
}

std::vector<std::string> RowClaim::statements(const QueueSql& sql) const {
    if (!queue_.group_by.empty()) {
        std::vector<std::string> grouped = {sql.claim_plan(), sql.claim_expired(), sql.list_keys(),
                                            sql.grouped_claim(queue_.order_by.empty() ? 0 : 1, 1),
                                            sql.read_back()};
        if (queue_.concurrency_per_key > 0) grouped.push_back(sql.in_flight_by_key());
        return grouped;
    }
    return {sql.claim_plan(), sql.claim_expired(), sql.claim(), sql.read_back()};
}

}  // namespace rowpump
