#pragma once

// The tasks this worker's threads hold (fetched, not reported yet), and the ones its
// processing list holds that no thread does. A fetch that Redis executed but whose reply never
// arrived (the connection broke in between: a network failure, a Redis shutdown) leaves its
// tasks in the processing list, unknown to every thread. Nothing else would ever give them
// back: while this worker sends heartbeats the dispatcher counts them as held and renews their
// leases, so they would wait, unrun, for as long as the worker lives.

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "session.hpp"
#include "worker_keys.hpp"
#include "worker_log.hpp"

namespace rowpump::details {

class HeldTasks {
public:
    // A reply in flight reaches its thread well within this; a message no thread has taken
    // for this long after a lost reply never will be.
    static constexpr std::chrono::milliseconds kOrphanAge{1000};

    // Keeps references to everything it is given: they must outlive it.
    HeldTasks(const WorkerKeys& keys, WorkerLog& log);

    void hold(const std::string& ready_message);
    void release(const std::string& ready_message);

    // A fetch failed after it may have reached Redis: its reply may be lost.
    void fetch_reply_lost() noexcept { reply_lost_.store(true, std::memory_order_relaxed); }

    // Costs nothing unless a reply was lost. Then a first call notes the messages in the
    // processing list that no thread holds, and the first call kOrphanAge or more later moves
    // those still there and still unheld back to the ready list (with the complete script, so
    // each one moves only if it is still in the processing list). Throws redis errors.
    void give_back_orphans(Session& s);

private:
    std::set<std::string> unheld(Session& s) const;

    const WorkerKeys& keys_;
    WorkerLog& log_;
    mutable std::mutex held_mutex_;
    std::multiset<std::string> held_;
    std::atomic<bool> reply_lost_{false};
    std::atomic<bool> looking_{false};  // suspects_ has a value
    std::mutex look_mutex_;             // one thread looks at a time; guards suspects_
    std::optional<std::set<std::string>> suspects_;
    std::chrono::steady_clock::time_point suspects_at_;
};

}  // namespace rowpump::details
