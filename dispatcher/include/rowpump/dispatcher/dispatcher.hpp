#pragma once

// The dispatch loop: one thread per queue, each with its own MySQL and Redis connections,
// so a slow or failing queue never stalls another.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "rowpump/dispatcher/config.hpp"

namespace rowpump {

class Dispatcher {
public:
    explicit Dispatcher(const Config& config);
    ~Dispatcher();  // stops and joins
    Dispatcher(const Dispatcher&) = delete;
    Dispatcher& operator=(const Dispatcher&) = delete;

    void start();
    // Asks every queue to finish its current batch and return. Safe from any thread.
    void stop() noexcept;
    // Waits until every queue thread has returned.
    void join();

private:
    const Config& config_;
    std::atomic<bool> stopping_{false};
    std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<std::thread> threads_;
};

}  // namespace rowpump
