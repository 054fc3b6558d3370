#include "adaptive_batch.hpp"

#include <algorithm>

namespace rowpump::details {

AdaptiveBatch::AdaptiveBatch(int limit) : limit_(std::max(1, limit)) {}

int AdaptiveBatch::allowed() const {
    if (per_task_.count() < 0 || round_trip_.count() == 0) return 1;
    if (per_task_ >= round_trip_) return 1;  // slow handlers: a task in hand waits too long
    const auto fits = per_task_.count() == 0 ? limit_ : round_trip_ / per_task_;
    return static_cast<int>(std::clamp<Duration::rep>(fits, 1, limit_));
}

void AdaptiveBatch::handled(int tasks, Duration handling) {
    if (tasks <= 0) return;
    per_task_ = handling / tasks;
    next_ = std::min(next_, allowed());
}

void AdaptiveBatch::fetched(int asked, int got, Duration round_trip) {
    round_trip_ = round_trip_.count() == 0 ? round_trip : (3 * round_trip_ + round_trip) / 4;
    // A full answer means the ready list may hold more: ask for twice as many next time. A
    // short one says how many were waiting: after an empty list the next tasks to come may be
    // of another kind (slower), so the batch starts again from one.
    const int wanted = got >= asked ? 2 * asked : std::max(got, 1);
    next_ = std::min(wanted, allowed());
}

}  // namespace rowpump::details
