#pragma once

// Keeps systemd (Type=notify, WatchdogSec=) told how the dispatcher is doing:
// - READY=1 once every queue has connected, as leader or standby, so `systemctl start`
//   returns when the dispatcher really works (and fails if the servers never answer);
// - STATUS= with what each queue does, shown by `systemctl status`;
// - WATCHDOG=1 only while every queue loop makes progress: a loop stuck in one cycle for
//   longer than WatchdogSec stops the pings, and systemd restarts the service;
// - STOPPING=1 when shutdown begins.
// Without $NOTIFY_SOCKET it does nothing and starts no thread.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rowpump/dispatcher/observe/queue_health.hpp"
#include "rowpump/dispatcher/observe/systemd_notify.hpp"

namespace rowpump {

class ServiceMonitor {
public:
    ServiceMonitor(SystemdNotifier notifier,
                   const std::vector<std::unique_ptr<QueueHealth>>& queues);
    ~ServiceMonitor();  // stops and joins
    ServiceMonitor(const ServiceMonitor&) = delete;
    ServiceMonitor& operator=(const ServiceMonitor&) = delete;

    void start();
    // Sends STOPPING=1 and ends the thread. Safe to call more than once.
    void stopping() noexcept;

private:
    void run();
    void tick(TimePoint now);
    bool healthy(TimePoint now);

    const SystemdNotifier notifier_;
    const std::vector<std::unique_ptr<QueueHealth>>& queues_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
    bool ready_ = false;
    std::string status_;
    std::vector<bool> reported_stuck_;
};

}  // namespace rowpump
