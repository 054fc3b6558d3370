#include "rowpump/dispatcher/loop/locked_row_watch.hpp"

namespace rowpump {

std::vector<std::string> LockedRowWatch::looked(const std::vector<std::string>& ids,
                                                Clock::time_point now) {
    last_look_ = now;
    std::map<std::string, Clock::time_point> since;
    std::set<std::string> reported;
    std::vector<std::string> report;
    for (const auto& id : ids) {
        const auto seen = passed_over_since_.find(id);
        const auto first = seen == passed_over_since_.end() ? now : seen->second;
        since.emplace(id, first);
        if (reported_.count(id) != 0) {
            reported.insert(id);
        } else if (now - first >= check_every_) {
            reported.insert(id);
            report.push_back(id);
        }
    }
    // A row a look no longer finds was claimed or stopped being due: forget it, so that it is
    // reported again if it is ever held that long again.
    passed_over_since_ = std::move(since);
    reported_ = std::move(reported);
    return report;
}

}  // namespace rowpump
