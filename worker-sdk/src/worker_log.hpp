#pragma once

// Where a worker says what it survives: the user's log callback, or stderr.

#include <atomic>
#include <exception>
#include <functional>
#include <string>
#include <utility>

namespace rowpump::details {

class WorkerLog {
public:
    using Sink = std::function<void(const std::string&)>;
    // An empty sink writes "rowpump worker <worker_id>: <line>" to stderr.
    WorkerLog(Sink sink, std::string worker_id)
        : sink_(std::move(sink)), worker_id_(std::move(worker_id)) {}

    void line(const std::string& text) const noexcept;

    // An outage is logged once when it starts and once when it ends, not on every retry.
    void redis_failed(const std::exception& e);
    void redis_ok();

private:
    Sink sink_;
    std::string worker_id_;
    std::atomic<bool> redis_down_{false};
};

}  // namespace rowpump::details
