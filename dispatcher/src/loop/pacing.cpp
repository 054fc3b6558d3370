#include "rowpump/dispatcher/loop/pacing.hpp"

#include <algorithm>
#include <limits>

namespace rowpump {

void RateLimiter::expire(TimePoint now) {
    while (!window_.empty() && window_.front().first + rate_->per <= now) {
        in_window_ -= window_.front().second;
        window_.pop_front();
    }
}

std::int64_t RateLimiter::available(TimePoint now) {
    if (!rate_) return std::numeric_limits<std::int64_t>::max();
    expire(now);
    return std::max<std::int64_t>(0, rate_->count - in_window_);
}

TimePoint RateLimiter::next_available(TimePoint now) {
    if (available(now) > 0) return now;
    // Walk the window until enough rows have left it for one more to fit.
    std::int64_t must_leave = in_window_ - rate_->count + 1;
    for (const auto& [at, rows] : window_) {
        must_leave -= rows;
        if (must_leave <= 0) return at + rate_->per;
    }
    return now;  // unreachable: available() was 0, so the window holds more than count
}

void RateLimiter::record(TimePoint at, std::int64_t rows) {
    if (!rate_ || rows <= 0) return;
    window_.emplace_back(at, rows);
    in_window_ += rows;
}

std::int64_t dispatch_capacity(std::int64_t batch, std::int64_t max_backlog,
                               std::int64_t ready_length, std::int64_t rate_available,
                               std::int64_t shares) {
    auto share = [shares](std::int64_t room) {
        return room <= 0 ? room : room / shares + (room % shares != 0 ? 1 : 0);
    };
    return std::max<std::int64_t>(
        0, std::min({batch, share(max_backlog - ready_length), share(rate_available)}));
}

Millis retry_backoff(const RetryConfig& retry, int failed_attempts, double jitter) {
    const int doublings = std::clamp(failed_attempts - 1, 0, 40);
    Millis delay = retry.cap;
    if (doublings < 40 && retry.base.count() <= (retry.cap.count() >> doublings)) {
        delay = retry.base * (std::int64_t{1} << doublings);
    }
    const auto half = delay.count() / 2;
    const double spread = std::clamp(jitter, 0.0, 1.0) * static_cast<double>(delay.count() - half);
    return Millis(half + static_cast<std::int64_t>(spread));
}

Millis lease_look_interval(const QueueConfig& queue) {
    return std::max(Millis(1), queue.lease / 8);
}

}  // namespace rowpump
