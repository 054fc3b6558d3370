#pragma once

// The thread that keeps a worker's heartbeat key alive while it holds tasks.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "session.hpp"

namespace rowpump::details {

class Heartbeat {
public:
    // Calls `beat` every `interval` on a connection of its own; after a failure, retries
    // sooner (with backoff) and reports it through `on_failure`.
    using Beat = std::function<void(Session&)>;
    using OnFailure = std::function<void(const std::exception&)>;
    Heartbeat(Session session, milliseconds interval, Beat beat, OnFailure on_failure);
    ~Heartbeat();  // stops the thread
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

private:
    void loop();

    Session session_;
    milliseconds interval_;
    Beat beat_;
    OnFailure on_failure_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool quit_ = false;
    std::thread thread_;
};

}  // namespace rowpump::details
