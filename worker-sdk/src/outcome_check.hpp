#pragma once

// Turning a handler's Outcome into a done message: checked against the values the queue
// declares, and encoded within the protocol's limits.

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rowpump/worker.hpp"

namespace rowpump::details {

// The names the queue's on_success takes, as the dispatcher announces them in the meta hash.
// Updated by the heartbeat thread, read by every thread that reports.
class DeclaredValues {
public:
    explicit DeclaredValues(std::string queue) : queue_(std::move(queue)) {}

    // From the meta hash's values field ("status,note").
    void update(const std::string& csv);
    // "" if `outcome` may be reported, else what is wrong with it, naming the queue.
    std::string problem(const Outcome& outcome) const;

private:
    std::string queue_;
    mutable std::mutex mutex_;
    std::vector<std::string> names_;
};

// The done message that reports `outcome` on `task`, with ms=<handler_ms> when given; throws
// Error when it is too long.
std::string done_message(const Task& task, const Outcome& outcome,
                         std::optional<milliseconds> handler_ms = std::nullopt);

// What run() reports for a handler's outcome: its done message, or, for an outcome that
// cannot be reported, a retry that names the problem (so the row is not lost, and once its
// attempts run out `rowpump dead` shows why). `handled`: how long the handler ran (ms=).
std::string checked_done_message(const Task& task, const Outcome& outcome,
                                 const DeclaredValues& declared,
                                 std::chrono::steady_clock::duration handled);

}  // namespace rowpump::details
