#pragma once

// The dispatch loop: one thread per queue (per shard of a queue with shards), each with its own
// MySQL and Redis connections, so a slow or failing queue or shard never stalls another.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/shard_balance.hpp"
#include "rowpump/dispatcher/observe/queue_health.hpp"
#include "rowpump/dispatcher/observe/queue_metrics.hpp"

namespace rowpump {

class Observer;
class HttpEndpoint;

class Dispatcher {
public:
    explicit Dispatcher(const Config& config);
    ~Dispatcher();  // stops and joins
    Dispatcher(const Dispatcher&) = delete;
    Dispatcher& operator=(const Dispatcher&) = delete;

    // Starts the queues, the observer and, with `http` configured, the HTTP endpoint (throws
    // std::runtime_error when its port cannot be had).
    void start();
    // Asks every queue to finish its current batch and return. Safe from any thread.
    void stop() noexcept;
    // Waits until every queue thread has returned.
    void join();
    // One per loop (a queue, or a shard of one), in config order, for the service monitor.
    const std::vector<std::unique_ptr<QueueHealth>>& health() const { return health_; }

    const MetricsSet& metrics() const { return metrics_; }

private:
    const Config& config_;
    MetricsSet metrics_;
    std::unique_ptr<Observer> observer_;
    std::unique_ptr<HttpEndpoint> http_;
    std::atomic<bool> stopping_{false};
    std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<std::unique_ptr<QueueHealth>> health_;  // one per loop
    struct Loop {
        std::unique_ptr<QueueSource> source;
        std::size_t queue;  // in config.queues and metrics_
    };
    std::vector<Loop> loops_;
    std::vector<std::unique_ptr<ShardBalance>> balances_;  // per queue; null without shards
    std::vector<std::thread> threads_;
};

}  // namespace rowpump
