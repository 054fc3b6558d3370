#include "session_pool.hpp"

namespace rowpump::details {

Session SessionPool::take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.empty()) return Session(address_, queue_);
    Session session = std::move(idle_.back());
    idle_.pop_back();
    return session;
}

void SessionPool::give_back(Session session) noexcept {
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        idle_.push_back(std::move(session));
    } catch (...) {
        // Out of memory: the session closes here; the pool opens another when needed.
    }
}

}  // namespace rowpump::details
