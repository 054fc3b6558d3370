#include "rowpump/dispatcher/observe/service_monitor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace rowpump {

namespace {

// STATUS= is refreshed at least this often; WATCHDOG=1 goes twice per WatchdogSec, as
// sd_watchdog_enabled(3) advises.
constexpr Millis kStatusInterval{1000};

}  // namespace

ServiceMonitor::ServiceMonitor(SystemdNotifier notifier,
                               const std::vector<std::unique_ptr<QueueHealth>>& queues)
    : notifier_(std::move(notifier)), queues_(queues), reported_stuck_(queues.size(), false) {}

ServiceMonitor::~ServiceMonitor() {
    stopping();
    if (thread_.joinable()) thread_.join();
}

void ServiceMonitor::start() {
    if (!notifier_.enabled()) return;
    if (auto watchdog = notifier_.watchdog()) {
        spdlog::info("systemd watchdog: {}; a queue loop stuck for that long stops the pings",
                     format_duration(*watchdog));
    }
    thread_ = std::thread([this] { run(); });
}

void ServiceMonitor::stopping() noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) return;
        stopping_ = true;
    }
    wake_.notify_all();
    notifier_.notify("STOPPING=1\nSTATUS=stopping: finishing the current batches");
}

void ServiceMonitor::run() {
    Millis interval = kStatusInterval;
    if (auto watchdog = notifier_.watchdog()) interval = std::min(interval, *watchdog / 2);
    interval = std::max(interval, Millis(1));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        tick(Clock::now());
        lock.lock();
        wake_.wait_for(lock, interval, [this] { return stopping_; });
    }
}

void ServiceMonitor::tick(TimePoint now) {
    std::string status;
    bool all_connected = true;
    for (const auto& queue : queues_) {
        status += (status.empty() ? "" : "; ") + queue->describe();
        all_connected = all_connected && queue->connected_once();
    }
    std::string message;
    if (!ready_ && all_connected) {
        ready_ = true;
        message += "READY=1\n";
        spdlog::info("every queue has connected; told systemd the service is ready");
    }
    if (status != status_) {
        status_ = status;
        message += "STATUS=" + status + "\n";
    }
    if (notifier_.watchdog() && healthy(now)) message += "WATCHDOG=1\n";
    if (!message.empty()) notifier_.notify(message);
}

bool ServiceMonitor::healthy(TimePoint now) {
    bool healthy = true;
    for (std::size_t i = 0; i < queues_.size(); ++i) {
        const bool stuck = queues_[i]->stuck(now, *notifier_.watchdog());
        if (stuck && !reported_stuck_[i]) {
            spdlog::error(
                "queue {}: one cycle has run for more than {}; no more watchdog pings, "
                "systemd will restart the service",
                queues_[i]->name(), format_duration(*notifier_.watchdog()));
        }
        reported_stuck_[i] = stuck;
        healthy = healthy && !stuck;
    }
    return healthy;
}

}  // namespace rowpump
