#include "rowpump/dispatcher/loop/in_flight.hpp"

#include <unordered_set>

namespace rowpump {

void InFlight::forget() {
    tokens_.clear();
    known_ = false;
}

void InFlight::load(const std::vector<std::string>& messages) {
    tokens_.clear();
    for (const auto& message : messages) {
        std::string error;
        if (auto task = protocol::parse_ready(message, error)) tokens_[task->id] = task->token;
    }
    known_ = true;
}

void InFlight::add(const std::vector<ClaimedRow>& rows) {
    for (const auto& row : rows) tokens_[row.id] = row.token;
}

bool InFlight::stale(const Task& task) const {
    auto it = tokens_.find(task.id);
    return it != tokens_.end() && it->second != task.token;
}

void InFlight::finished(const Task& task) {
    auto it = tokens_.find(task.id);
    if (it != tokens_.end() && it->second == task.token) tokens_.erase(it);
}

std::vector<std::string> InFlight::messages() const {
    std::vector<std::string> out;
    out.reserve(tokens_.size());
    for (const auto& [id, token] : tokens_) out.push_back(protocol::format_ready(id, token));
    return out;
}

std::size_t InFlight::keep_only(const std::vector<std::string>& held,
                                const std::vector<Task>& keep) {
    std::unordered_set<std::string> still;
    for (const auto& message : held) {
        std::string error;
        if (auto task = protocol::parse_ready(message, error)) still.insert(task->id);
    }
    for (const auto& task : keep) still.insert(task.id);
    std::size_t dropped = 0;
    for (auto it = tokens_.begin(); it != tokens_.end();) {
        if (still.count(it->first) == 0) {
            it = tokens_.erase(it);
            ++dropped;
        } else {
            ++it;
        }
    }
    return dropped;
}

}  // namespace rowpump
