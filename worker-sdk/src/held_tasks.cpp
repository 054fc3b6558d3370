#include "held_tasks.hpp"

#include "rowpump/common/protocol/scripts.hpp"

namespace rowpump::details {

HeldTasks::HeldTasks(const WorkerKeys& keys, WorkerLog& log) : keys_(keys), log_(log) {}

void HeldTasks::hold(const std::string& ready_message) {
    std::lock_guard<std::mutex> lock(held_mutex_);
    held_.insert(ready_message);
}

void HeldTasks::release(const std::string& ready_message) {
    std::lock_guard<std::mutex> lock(held_mutex_);
    auto it = held_.find(ready_message);
    if (it != held_.end()) held_.erase(it);
}

std::set<std::string> HeldTasks::unheld(Session& s) const {
    const auto listed = s.command({"LRANGE", keys_.processing, "0", "-1"}).strings();
    std::lock_guard<std::mutex> lock(held_mutex_);
    std::set<std::string> out;
    for (const auto& message : listed) {
        if (held_.count(message) == 0) out.insert(message);
    }
    return out;
}

void HeldTasks::give_back_orphans(Session& s) {
    if (!reply_lost_.load(std::memory_order_relaxed) && !looking_.load()) return;
    std::unique_lock<std::mutex> lock(look_mutex_, std::try_to_lock);
    if (!lock) return;
    const auto now = std::chrono::steady_clock::now();
    if (!suspects_) {
        // A reply lost from now on starts a look of its own; this one is owed until it is done.
        reply_lost_.store(false, std::memory_order_relaxed);
        try {
            suspects_ = unheld(s);
        } catch (...) {
            reply_lost_.store(true, std::memory_order_relaxed);
            throw;
        }
        suspects_at_ = now;
        if (suspects_->empty()) suspects_.reset();
        looking_ = suspects_.has_value();
        return;
    }
    if (now - suspects_at_ < kOrphanAge) return;
    std::vector<std::string> args;
    for (const auto& message : unheld(s)) {
        if (suspects_->count(message) == 0) continue;
        args.push_back(message);
        args.push_back(message);
    }
    const auto moved = args.empty() ? 0
                                    : s.eval(protocol::kCompleteScript,
                                             {keys_.processing, keys_.queue.ready}, args)
                                          .integer();
    suspects_.reset();  // only now: a look that failed is tried again
    looking_ = false;
    if (moved == 0) return;
    log_.line("gave back " + std::to_string(moved) + " task(s) that a fetch had moved into " +
              keys_.processing + " but whose reply was lost");
}

}  // namespace rowpump::details
