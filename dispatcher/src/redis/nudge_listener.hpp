#pragma once

// Listens on a queue's nudge channel (rowpump:{q}:nudge, docs/protocol.md) in a thread of
// its own and calls back on every message, so that the queue's loop claims at once instead of
// waiting out its poll interval. A subscribed connection sends no command while it waits: an
// idle queue costs Redis nothing more. The poll stays the backstop: while Redis is away the
// listener reconnects quietly and the loop polls as before.

#include <functional>
#include <string>
#include <thread>

#include "rowpump/common/backoff.hpp"
#include "rowpump/redis_address.hpp"

namespace rowpump {

class NudgeListener {
public:
    // Starts listening on `channel`; `on_nudge` runs on the listener's thread.
    NudgeListener(RedisAddress address, std::string channel, std::function<void()> on_nudge);
    // Stops the thread (it waits on an eventfd beside the socket) and joins it.
    ~NudgeListener();
    NudgeListener(const NudgeListener&) = delete;
    NudgeListener& operator=(const NudgeListener&) = delete;

private:
    void listen();
    // Subscribes (then resets `backoff`) and calls back on every message until stopped;
    // throws redis::Error when the connection breaks.
    void listen_once(Backoff& backoff);
    // Waits up to `ms` or until stopped; true when stopped.
    bool stopped_within(int ms) const;

    const RedisAddress address_;
    const std::string channel_;
    const std::function<void()> on_nudge_;
    int stop_fd_;
    std::thread thread_;
};

}  // namespace rowpump
