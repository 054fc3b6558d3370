#include "rowpump/dispatcher/loop/unknown_pushes.hpp"

#include <unordered_set>

#include "rowpump/common/protocol/protocol.hpp"

namespace rowpump {

void UnknownPushes::add(const Claim& claim) {
    if (!claim.rows.empty()) claims_.push_back(claim);
}

UnknownPushes::Settled UnknownPushes::settle(RedisSide& redis) const {
    Settled settled;
    if (claims_.empty()) return settled;
    std::vector<std::string> messages;
    for (const auto& claim : claims_) {
        for (const auto& row : claim.rows)
            messages.push_back(protocol::format_ready(row.id, row.token));
    }
    const auto found = redis.held(messages);
    const std::unordered_set<std::string> held(found.begin(), found.end());
    for (const auto& claim : claims_) {
        bool landed = false;
        for (const auto& row : claim.rows) {
            if (held.count(protocol::format_ready(row.id, row.token)) > 0) {
                landed = true;
                break;
            }
        }
        (landed ? settled.landed : settled.not_landed).push_back(claim);
    }
    return settled;
}

}  // namespace rowpump
