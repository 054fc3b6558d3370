#pragma once

// Reading a queue's Redis keys from tests, and a stand-in worker that pops ready messages.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/common/redis/redis.hpp"

namespace rowpump::testing {

std::string ready_key(const std::string& queue);
std::int64_t list_length(redis::Connection& redis, const std::string& key);
// The whole list, read in chunks.
std::vector<std::string> list_all(redis::Connection& redis, const std::string& key);
// Parses ready messages; throws std::runtime_error naming the first malformed one.
std::vector<Task> parse_ready_all(const std::vector<std::string>& messages);

struct ConsumerOptions {
    RedisAddress redis;
    std::string queue;
    int per_pop = 5;                     // LPOP <key> <count>
    std::chrono::milliseconds pause{5};  // between pops: the consumer's pace
    // Report each task "ok" with these values by pushing a done message straight to the done
    // list, as a plain (non-SDK) worker may.
    bool report_ok = false;
    std::vector<std::pair<std::string, std::string>> ok_values;
};

// A thread popping ready messages and remembering them. Survives Redis restarts: it
// reconnects until stopped.
class Consumer {
public:
    explicit Consumer(ConsumerOptions options);
    ~Consumer();
    Consumer(const Consumer&) = delete;
    Consumer& operator=(const Consumer&) = delete;

    void stop();
    std::vector<std::string> messages() const;  // every message popped, in order
    std::size_t count() const;
    std::set<std::string> ids() const;              // distinct row ids popped
    std::size_t errors() const { return errors_; }  // connection errors seen
    std::string last_error() const;

private:
    void run();
    void pop_once(redis::Connection& redis);

    ConsumerOptions options_;
    std::string ready_;
    std::string done_;
    mutable std::mutex mutex_;
    std::vector<std::string> messages_;
    std::string last_error_;
    std::atomic<std::size_t> errors_{0};
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace rowpump::testing
