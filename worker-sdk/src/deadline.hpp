#pragma once

// Handler deadlines: WorkerOptions::timeout, or a task's own from its "timeout_ms" field.
// With a deadline the handler runs on a HandlerThread that the run() thread keeps for the
// next task; past the deadline the task's cancellation is set, the run() thread reports a
// retry with reason "timeout" and goes on with a new HandlerThread, and the late handler
// finishes in the background, its outcome discarded (a task is reported once).

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "rowpump/worker.hpp"

namespace rowpump::details {

// The ready message field that sets its task's deadline, in milliseconds.
inline constexpr const char* kTimeoutField = "timeout_ms";

// The task's deadline: its timeout_ms field if that is a positive whole number of
// milliseconds (at most 2^31), else `worker_timeout` (0: none). `problem` tells why a field
// that is there was not used, empty otherwise.
std::optional<milliseconds> task_deadline(const Task& task, milliseconds worker_timeout,
                                          std::string& problem);

// A thread that runs one handler call after another.
class HandlerThread {
public:
    HandlerThread();
    // Joins the thread, or leaves it to finish on its own once abandoned.
    ~HandlerThread();
    HandlerThread(const HandlerThread&) = delete;
    HandlerThread& operator=(const HandlerThread&) = delete;

    // Runs `call` on the thread and returns its outcome, or nothing once `deadline` passed:
    // then this HandlerThread is abandoned and takes no further call.
    std::optional<Outcome> run(std::function<Outcome()> call, milliseconds deadline);
    bool abandoned() const { return abandoned_; }

private:
    struct State {
        std::mutex mutex;
        std::condition_variable changed;
        std::function<Outcome()> call;  // waiting to run
        std::optional<Outcome> outcome;
        bool quit = false;
    };
    static void loop(State& state);

    std::shared_ptr<State> state_;
    std::thread thread_;
    bool abandoned_ = false;
};

}  // namespace rowpump::details
