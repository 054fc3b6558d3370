#pragma once

// What one queue loop is doing, written by the queue's own thread and read by the service
// monitor (service_monitor.hpp): whether it has connected, its role, and whether its current
// cycle has been running for too long (a hung statement, a deadlock in the process).

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include "rowpump/dispatcher/loop/pacing.hpp"

namespace rowpump {

enum class QueueRole { connecting, leader, standby, retrying };

class QueueHealth {
public:
    explicit QueueHealth(std::string name) : name_(std::move(name)) {}
    QueueHealth(const QueueHealth&) = delete;
    QueueHealth& operator=(const QueueHealth&) = delete;

    // The queue's thread: a cycle starts (busy from `now`), a cycle ends and the loop waits
    // by choice (sleeping is progress, not a hang).
    void cycle_started(TimePoint now) noexcept;
    void cycle_ended() noexcept;
    // `detail` says why, for `retrying` (the last error).
    void set_role(QueueRole role, const std::string& detail = {});
    void add_dispatched(std::int64_t rows) noexcept { dispatched_ += rows; }

    const std::string& name() const { return name_; }
    // Has been leader or standby at least once: the servers were reachable and it was set up.
    bool connected_once() const noexcept { return connected_once_; }
    // In the same cycle for longer than `limit`.
    bool stuck(TimePoint now, Millis limit) const noexcept;
    // One line for systemd's STATUS=, e.g. "user_block_check: leader, 1200 rows dispatched".
    std::string describe() const;

private:
    const std::string name_;
    std::atomic<std::int64_t> busy_since_{0};  // steady clock, ns; 0 while waiting
    std::atomic<std::int64_t> dispatched_{0};
    std::atomic<bool> connected_once_{false};
    mutable std::mutex mutex_;  // guards role_ and detail_
    QueueRole role_ = QueueRole::connecting;
    std::string detail_;
};

}  // namespace rowpump
