#pragma once

// A worker's membership of its queue: joining (the queue is announced, the scripts are
// loaded, the heartbeat beats), staying listed, and leaving.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

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
               const Reporter& reporter, WorkerLog& log, const std::atomic<bool>& stop);
    ~Membership() { leave(); }
    Membership(const Membership&) = delete;
    Membership& operator=(const Membership&) = delete;

    // Before the first fetch; returns at once when already joined. With survive_outages,
    // waits out Redis outages and returns false if stop came first; without, throws
    // ConnectionError. Throws Error when the queue stays unknown past options.queue_wait.
    bool join(bool survive_outages);
    // Stops the heartbeat and signs off; the next join starts over.
    void leave() noexcept;

private:
    using Clock = std::chrono::steady_clock;

    bool wait_for_queue(Session& s, Clock::time_point deadline, bool stoppable);
    void beat(Session& s);
    void give_back(Session& s);

    const WorkerOptions& options_;
    const WorkerKeys& keys_;
    DeclaredValues& declared_;
    const Reporter& reporter_;
    WorkerLog& log_;
    const std::atomic<bool>& stop_;

    std::mutex mutex_;
    std::atomic<bool> joined_{false};
    std::string beat_on_;  // the node of the last beat that went through
    std::unique_ptr<Heartbeat> heartbeat_;
};

}  // namespace rowpump::details
