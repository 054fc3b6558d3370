#include "rowpump/dispatcher/loop/in_flight.hpp"

#include <algorithm>
#include <unordered_set>

namespace rowpump {

namespace {

std::unordered_set<std::string> ids_of(const std::vector<std::string>& messages) {
    std::unordered_set<std::string> ids;
    for (const auto& message : messages) {
        std::string error;
        if (auto task = protocol::parse_ready(message, error)) ids.insert(task->id);
    }
    return ids;
}

}  // namespace

void InFlight::forget() {
    tasks_.clear();
    known_ = false;
}

void InFlight::learn(const std::vector<std::string>& messages, TimePoint lease_end) {
    for (const auto& message : messages) {
        std::string error;
        auto task = protocol::parse_ready(message, error);
        if (!task) continue;
        auto& entry = tasks_[task->id];
        if (entry.token != task->token) {
            entry.token = task->token;
            entry.lease_end = lease_end;
        } else {
            entry.lease_end = std::max(entry.lease_end, lease_end);
        }
    }
    known_ = true;
}

void InFlight::add(const std::vector<ClaimedRow>& rows, TimePoint lease_end) {
    for (const auto& row : rows) tasks_[row.id] = Entry{row.token, lease_end};
}

bool InFlight::issued(const Task& task) const {
    auto it = tasks_.find(task.id);
    return it != tasks_.end() && it->second.token == task.token;
}

void InFlight::finished(const Task& task) {
    if (issued(task)) tasks_.erase(task.id);
}

void InFlight::extend(const Task& task, TimePoint lease_end) {
    auto it = tasks_.find(task.id);
    if (it != tasks_.end() && it->second.token == task.token)
        it->second.lease_end = std::max(it->second.lease_end, lease_end);
}

void InFlight::drop_unless_held(const std::vector<std::string>& messages,
                                const std::vector<std::string>& held) {
    const std::unordered_set<std::string> found(held.begin(), held.end());
    for (const auto& message : messages) {
        if (found.count(message) > 0) continue;
        std::string error;
        if (auto task = protocol::parse_ready(message, error)) finished(*task);
    }
}

std::vector<std::string> InFlight::messages() const {
    std::vector<std::string> out;
    out.reserve(tasks_.size());
    for (const auto& [id, entry] : tasks_) out.push_back(protocol::format_ready(id, entry.token));
    return out;
}

InFlight::Audit InFlight::audit(const std::vector<std::string>& held, const std::vector<Task>& keep,
                                TimePoint now, TimePoint lease_end) {
    auto still = ids_of(held);
    for (const auto& task : keep) still.insert(task.id);
    Audit audit;
    for (auto it = tasks_.begin(); it != tasks_.end();) {
        if (still.count(it->first) > 0) {
            it->second.lease_end = std::max(it->second.lease_end, lease_end);
        } else if (it->second.lease_end <= now) {
            it = tasks_.erase(it);
            ++audit.dropped;
            continue;
        } else {
            ++audit.unheld;
        }
        ++it;
    }
    return audit;
}

}  // namespace rowpump
