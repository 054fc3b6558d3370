#pragma once

// Taking tasks from the ready list into this worker's processing list: one at a time with
// (B)LMOVE, or a batch at once with the take script; malformed messages are set aside.

#include <atomic>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "held_tasks.hpp"
#include "rowpump/worker.hpp"
#include "session.hpp"
#include "worker_keys.hpp"
#include "worker_log.hpp"

namespace rowpump::details {

// BLMOVE takes its timeout in seconds: "1.500".
std::string seconds_text(milliseconds ms);

// The longest a fetch may block in Redis (see fetcher.cpp).
milliseconds longest_block(milliseconds heartbeat_ttl, milliseconds heartbeat_interval);

class Fetcher {
public:
    // Keeps references to everything it is given: they must outlive it.
    Fetcher(const WorkerOptions& options, const WorkerKeys& keys, HeldTasks& held, WorkerLog& log,
            const std::atomic<bool>& stop);

    // Waits up to `timeout` for a task, in blocks no longer than longest_block; returns
    // early, empty, once stop is set.
    std::optional<Task> fetch(Session& s, milliseconds timeout);

    // The fetch that run() pipelines behind its reports: append_fetch sends it, read_fetch
    // reads its reply (the messages now in the processing list) and take_all turns them into
    // tasks. For one task (batch 1, or the adaptive batch at one) a BLMOVE, so an idle
    // worker waits in Redis; for more the take script for up to `count` tasks, which does
    // not block (an empty answer sends the thread to fetch(), which does).
    void append_fetch(Session& s, int count) const;
    std::vector<std::string> read_fetch(Session& s, int count);
    std::deque<Task> take_all(Session& s, std::vector<std::string> messages);

    // Every task fetched is held until its report (release it there).
    HeldTasks& held() { return held_; }

    // Malformed ready messages moved to the bad list so far.
    std::uint64_t bad_messages() const noexcept {
        return bad_messages_.load(std::memory_order_relaxed);
    }

private:
    std::vector<std::string> blmove(milliseconds timeout) const;
    // True when the fetch of `count` tasks is a blocking BLMOVE.
    bool blocks(int count) const;
    std::optional<Task> take(Session& s, std::string message);
    void set_aside(Session& s, const std::string& message, const std::string& error);

    const WorkerOptions& options_;
    const WorkerKeys& keys_;
    HeldTasks& held_;
    WorkerLog& log_;
    const std::atomic<bool>& stop_;
    const milliseconds max_block_;
    std::atomic<std::uint64_t> bad_messages_{0};
};

}  // namespace rowpump::details
