#pragma once

// A worker that speaks the documented wire protocol (docs/protocol.md) with raw Redis
// commands only: heartbeat key and workers set, BLMOVE into its processing list, a report
// through kCompleteScript. Tests use it to show that what they prove holds for any worker,
// not just for the SDK.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/common/redis/redis.hpp"

namespace rowpump::testing {

struct ProtocolWorkerOptions {
    RedisAddress redis;
    std::string queue = "users";
    std::string worker_id = "protocol-worker";
    std::chrono::milliseconds heartbeat_ttl{3000};
    std::chrono::milliseconds work{0};  // each task takes this long
    // The done message's text after the ready message, e.g. "ok status=1".
    std::string report = "ok status=1";
};

// One thread: takes a task, works, reports, again. Stops (and signs off) when destroyed.
class ProtocolWorker {
public:
    explicit ProtocolWorker(ProtocolWorkerOptions options);
    ~ProtocolWorker();
    ProtocolWorker(const ProtocolWorker&) = delete;
    ProtocolWorker& operator=(const ProtocolWorker&) = delete;

    void stop();
    // How often each row id was handled, and how many reports Redis refused (the task had
    // been taken back).
    std::map<std::string, int> runs() const;
    std::int64_t handled() const { return handled_; }
    std::int64_t refused() const { return refused_; }
    std::string last_error() const;

private:
    void run();
    void beat(redis::Connection& redis);
    void take_and_report(redis::Connection& redis);

    ProtocolWorkerOptions options_;
    protocol::Keys keys_;
    std::chrono::steady_clock::time_point last_beat_{};
    mutable std::mutex mutex_;
    std::map<std::string, int> runs_;
    std::string last_error_;
    std::atomic<std::int64_t> handled_{0};
    std::atomic<std::int64_t> refused_{0};
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace rowpump::testing
