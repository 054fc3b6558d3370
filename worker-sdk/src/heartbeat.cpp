#include "heartbeat.hpp"

#include <utility>

namespace rowpump::details {

Heartbeat::Heartbeat(Session session, milliseconds interval, Beat beat, OnFailure on_failure)
    : session_(std::move(session)),
      interval_(interval),
      beat_(std::move(beat)),
      on_failure_(std::move(on_failure)),
      thread_([this] { loop(); }) {}

Heartbeat::~Heartbeat() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        quit_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void Heartbeat::loop() {
    auto backoff = redis_backoff();
    milliseconds wait = interval_;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            if (wake_.wait_for(lock, wait, [this] { return quit_; })) return;
        }
        try {
            beat_(session_);
            backoff.reset();
            wait = interval_;
        } catch (const std::exception& e) {
            session_.reset();
            on_failure_(e);
            wait = std::min(backoff.next(), interval_);
        }
    }
}

}  // namespace rowpump::details
