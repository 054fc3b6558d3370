#pragma once

// In-process SDK workers for end-to-end tests. Header-only: rowpump_testing does not
// link the worker SDK, the integration tests do.

#include <exception>
#include <string>
#include <thread>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/worker.hpp"

namespace rowpump::testing {

// Options for a rowpump::Worker on the system's queue and Redis.
inline WorkerOptions e2e_worker_options(const E2eSystem& system,
                                        const std::string& worker_id = "") {
    WorkerOptions options;
    options.redis.host = "127.0.0.1";
    options.redis.port = system.bed.redis.port();
    options.queue = system.queue.name;
    options.worker_id = worker_id;
    return options;
}

// Worker::run() on a thread of its own; stopped and joined at the latest on destruction.
class RunningWorker {
public:
    RunningWorker(Worker& worker, Handler handler)
        : worker_(worker), thread_([this, handler] {
              try {
                  worker_.run(handler);
              } catch (...) {
                  error_ = std::current_exception();
              }
          }) {}
    ~RunningWorker() {
        worker_.stop();
        if (thread_.joinable()) thread_.join();
    }
    RunningWorker(const RunningWorker&) = delete;
    RunningWorker& operator=(const RunningWorker&) = delete;

    // Rethrows what run() threw, if anything.
    void stop_and_join() {
        worker_.stop();
        thread_.join();
        if (error_) std::rethrow_exception(error_);
    }

private:
    Worker& worker_;
    std::exception_ptr error_;
    std::thread thread_;
};

}  // namespace rowpump::testing
