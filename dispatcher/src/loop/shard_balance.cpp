#include "rowpump/dispatcher/loop/shard_balance.hpp"

#include <algorithm>

namespace rowpump {

std::string process_of(const std::string& leader_id) {
    return leader_id.substr(0, leader_id.rfind(':'));
}

bool should_hand_over(const std::vector<std::string>& leaders, const std::string& me,
                      const std::string& standby) {
    if (standby.empty() || me.empty()) return false;
    const auto mine = process_of(me), theirs = process_of(standby);
    if (mine == theirs) return false;
    auto count = [&](const std::string& process) {
        return std::count_if(leaders.begin(), leaders.end(), [&](const std::string& id) {
            return !id.empty() && process_of(id) == process;
        });
    };
    return count(theirs) + 1 < count(mine);
}

bool ShardBalance::try_hand_over(TimePoint now) {
    const std::int64_t now_ns = now.time_since_epoch().count();
    std::int64_t last = last_ns_.load();
    const std::int64_t pause_ns = std::chrono::nanoseconds(pause_).count();
    while (last == 0 || now_ns - last >= pause_ns) {
        if (last_ns_.compare_exchange_weak(last, now_ns)) return true;
    }
    return false;
}

}  // namespace rowpump
