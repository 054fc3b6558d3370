#pragma once

// One run() thread: takes tasks, runs the handler on them one after another, and reports
// each batch together with the next fetch, in one round trip.

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adaptive_batch.hpp"
#include "deadline.hpp"
#include "fetcher.hpp"
#include "outcome_check.hpp"
#include "reporter.hpp"
#include "rowpump/worker.hpp"
#include "session.hpp"
#include "worker_log.hpp"

namespace rowpump::details {

// Runs the handler; an exception it throws becomes a retry that carries its message.
Outcome run_handler(const Handler& handler, const Task& task);

class ServeLoop {
public:
    // Keeps references to everything it is given but the handler, which a handler call past
    // its deadline may still use after run() returned: they must outlive it.
    ServeLoop(const WorkerOptions& options, std::shared_ptr<const Handler> handler,
              Fetcher& fetcher, Reporter& reporter, const DeclaredValues& declared, WorkerLog& log,
              const std::atomic<bool>& stop);

    // Until stop is set and every task in hand is reported. Redis outages are waited out;
    // only a failure of the worker itself (out of memory, an encoding error) throws.
    void run();

private:
    using Clock = std::chrono::steady_clock;

    void handle_next();
    // The handler's outcome, or a retry with reason "timeout" once the task's deadline passed.
    Outcome handle(const Task& task);
    // Tasks to ask for in the next round trip: options.batch, or the adaptive rule's choice.
    int take_count() const;
    void fetch_one();
    std::deque<Task> report_and_fetch(const std::vector<Report>& reports);
    std::deque<Task> take_fetched(std::vector<std::string> messages);

    const WorkerOptions& options_;
    std::shared_ptr<const Handler> handler_;
    Fetcher& fetcher_;
    Reporter& reporter_;
    const DeclaredValues& declared_;
    WorkerLog& log_;
    const std::atomic<bool>& stop_;

    Session session_;
    Backoff backoff_ = redis_backoff();
    std::deque<Task> hand_;        // taken, waiting for the handler
    std::vector<Report> reports_;  // handled, waiting to be reported
    Clock::duration handling_{};   // the handler's time on the reports waiting
    AdaptiveBatch adaptive_;       // with options.batch 0
    // Runs handlers with a deadline; replaced when one runs past it.
    std::optional<HandlerThread> handler_thread_;
};

}  // namespace rowpump::details
