#pragma once

// A worker's membership of its queue: joining (the queue is announced, the scripts are
// loaded, the heartbeat beats), staying listed, and leaving.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <sys/types.h>

#include "heartbeat.hpp"
#include "outcome_check.hpp"
#include "reporter.hpp"
#include "rowpump/worker.hpp"
#include "session.hpp"
#include "worker_keys.hpp"
#include "worker_log.hpp"

namespace rowpump::details {

class Membership {
public:
    // Keeps references to everything it is given: they must outlive it.
    // `reporter` gives the count of reports for the heartbeat's worker info.
    Membership(const WorkerOptions& options, const WorkerKeys& keys, DeclaredValues& declared,
               const Reporter& reporter, WorkerLog& log, std::atomic<bool>& stop);
    ~Membership() { leave(); }
    Membership(const Membership&) = delete;
    Membership& operator=(const Membership&) = delete;

    // Before the first fetch; returns at once when already joined. With survive_outages,
    // waits out Redis outages and returns false if stop came first; without, throws
    // ConnectionError. Throws Error when the queue stays unknown past options.queue_wait, and
    // when another live process holds the worker id (see common/lua/beat.lua). In a child
    // after fork() (another pid), starts over with an incarnation of its own.
    bool join(bool survive_outages);
    // Why this process gave the worker id up while serving (another incarnation took the
    // heartbeat over: ours had lapsed), "" while it holds it; set before it requests a stop.
    std::string superseded() const;
    // Stops the heartbeat and signs off; the next join starts over.
    void leave() noexcept;

private:
    using Clock = std::chrono::steady_clock;

    bool wait_for_queue(Session& s, Clock::time_point deadline, bool stoppable);
    // Runs beat.lua; nullopt when the beat went through, else the heartbeat's value (another
    // incarnation's). `first`: the first beat of this incarnation.
    std::optional<std::string> beat(Session& s, bool first);
    // After the first beat found `other` in the heartbeat: waits until it lapses (then
    // beats) or is renewed (then throws Error). False when a stop came first.
    bool take_over(Session& s, std::string other);
    void keep_beating(Session& s);
    void give_back(Session& s);

    const WorkerOptions& options_;
    const WorkerKeys& keys_;
    DeclaredValues& declared_;
    const Reporter& reporter_;
    WorkerLog& log_;
    std::atomic<bool>& stop_;

    std::mutex mutex_;
    std::atomic<bool> joined_{false};
    std::string beat_on_;      // the node of the last beat that went through
    std::string incarnation_;  // chosen at each join, 16 hex digits
    pid_t pid_ = 0;            // the process that joined
    mutable std::mutex superseded_mutex_;
    std::string superseded_;
    std::unique_ptr<Heartbeat> heartbeat_;
};

}  // namespace rowpump::details
