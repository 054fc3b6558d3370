#include "loop/row_claim.hpp"

#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

void RowClaim::before_claim(RedisSide& redis, std::int64_t capacity,
                            const std::vector<DoneEntry>&) {
    if (capacity > 0) lease_keeper_.keep(*store_, redis);
}

const std::vector<ClaimedRow>& RowClaim::claim(std::int64_t capacity) {
    claim_ = store_->claim(capacity, lease_keeper_.horizon());
    return claim_.rows;
}

std::string RowClaim::describe() const {
    return "claim: mysql (the default): each task writes its row twice, claim and outcome, "
           "and the row shows its claim. Pick redis for about half the MySQL work per task";
}

std::vector<std::string> RowClaim::statements(const QueueSql& sql) const {
    return {sql.claim_plan(), sql.claim_expired(), sql.claim(), sql.read_back()};
}

}  // namespace rowpump
