#pragma once

// How many tasks a run() thread takes in its next round trip when WorkerOptions::batch is 0
// (adaptive, the default). Pure arithmetic: the serve loop passes in what it measured.
//
// Taking k tasks at once saves k - 1 round trips, but the last of them waits in this thread's
// hand while the handler runs on the others, where no other thread or worker can start it.
// The rule keeps that wait within about one round trip: k grows (doubling) only while the
// ready list had as many tasks as were asked for, falls to what it had when it had fewer, and
// never exceeds round trip / handler time; a handler that takes as long as a round trip or
// longer brings k back to 1 at once.

#include <chrono>

namespace rowpump::details {

class AdaptiveBatch {
public:
    using Duration = std::chrono::nanoseconds;

    // `limit`: the most k can grow to.
    explicit AdaptiveBatch(int limit = kDefaultLimit);

    // How many tasks to take in the next round trip: 1 until a handler and a round trip
    // have been measured.
    int next() const { return next_; }

    // The handler ran on `tasks` tasks (one hand) and took `handling` for all of them.
    void handled(int tasks, Duration handling);
    // A round trip that asked for `asked` tasks lasted `round_trip` and brought `got`.
    void fetched(int asked, int got, Duration round_trip);

    // Past 16, reports cost Redis more per task: each LREM scans the worker's processing list,
    // which holds up to threads x k tasks (docs/benchmarks.md: the drain benchmark).
    static constexpr int kDefaultLimit = 16;

private:
    // The largest k whose handlers together take no longer than a round trip.
    int allowed() const;

    int limit_;
    int next_ = 1;
    Duration per_task_{-1};   // the last hand's handler time per task; < 0: not measured yet
    Duration round_trip_{0};  // a moving average, so one slow round trip does not decide alone
};

}  // namespace rowpump::details
