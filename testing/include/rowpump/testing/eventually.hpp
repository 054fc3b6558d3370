#pragma once

// Polling instead of sleeping: tests wait for a condition with a deadline, never for a
// guessed amount of time.

#include <chrono>
#include <thread>

namespace rowpump::testing {

// Calls `condition` until it returns true (then true) or `timeout` has passed (then false,
// after one last try). Exceptions from `condition` propagate.
template <typename Condition>
bool eventually(std::chrono::milliseconds timeout, Condition&& condition,
                std::chrono::milliseconds interval = std::chrono::milliseconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(interval);
    }
    return condition();
}

}  // namespace rowpump::testing
