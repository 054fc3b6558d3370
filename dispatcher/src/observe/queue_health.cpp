#include "rowpump/dispatcher/observe/queue_health.hpp"

#include <algorithm>

namespace rowpump {

namespace {

std::int64_t nanos(TimePoint t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

void QueueHealth::cycle_started(TimePoint now) noexcept {
    // Never 0, which means "waiting", even on a clock that starts at 0.
    busy_since_ = std::max<std::int64_t>(1, nanos(now));
}

void QueueHealth::cycle_ended() noexcept {
    busy_since_ = 0;
}

void QueueHealth::set_role(QueueRole role, const std::string& detail) {
    if (role == QueueRole::leader || role == QueueRole::standby) connected_once_ = true;
    std::lock_guard<std::mutex> lock(mutex_);
    role_ = role;
    detail_ = detail;
}

bool QueueHealth::stuck(TimePoint now, Millis limit) const noexcept {
    const std::int64_t since = busy_since_;
    return since != 0 && nanos(now) - since > std::chrono::nanoseconds(limit).count();
}

std::string QueueHealth::describe() const {
    std::string text = name_ + ": ";
    std::lock_guard<std::mutex> lock(mutex_);
    switch (role_) {
        case QueueRole::connecting:
            return text + "connecting";
        case QueueRole::leader:
            return text + "leader, " + std::to_string(dispatched_.load()) + " rows dispatched";
        case QueueRole::standby:
            return text + "standby (another dispatcher holds the leader lock)";
        case QueueRole::retrying:
            break;
    }
    // STATUS= is one line: a multi-line server message would end it early.
    std::string detail = detail_.substr(0, 160);
    for (char& c : detail) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return text + "retrying after: " + detail;
}

}  // namespace rowpump
