#include "rowpump/testing/protocol_worker.hpp"

#include <optional>

namespace rowpump::testing {

ProtocolWorker::ProtocolWorker(ProtocolWorkerOptions options)
    : options_(std::move(options)),
      keys_(protocol::keys_for(options_.queue)),
      thread_([this] { run(); }) {}

ProtocolWorker::~ProtocolWorker() {
    stop();
}

void ProtocolWorker::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

void ProtocolWorker::run() {
    std::optional<redis::Connection> redis;
    while (!stop_) {
        try {
            if (!redis || redis->broken()) redis = redis::Connection::connect(options_.redis);
            take_and_report(*redis);
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lock(mutex_);
            last_error_ = e.what();
            redis.reset();
            std::this_thread::sleep_for(std::chrono::milliseconds(50));  // reconnect pace
        }
    }
    try {  // sign off as the README says: heartbeat first, then the set if nothing is held
        if (!redis || redis->broken()) redis = redis::Connection::connect(options_.redis);
        redis->command({"EVAL", std::string(protocol::kLeaveScript.text()), "3",
                        keys_.heartbeat(options_.worker_id), keys_.processing(options_.worker_id),
                        keys_.workers, options_.worker_id});
    } catch (const std::exception&) {
        // The dispatcher takes back whatever is left once the heartbeat lapses.
    }
}

void ProtocolWorker::beat(redis::Connection& redis) {
    const auto ttl = std::to_string(options_.heartbeat_ttl.count());
    redis.command({"SET", keys_.heartbeat(options_.worker_id), "1", "PX", ttl});
    redis.command({"SADD", keys_.workers, options_.worker_id});
    last_beat_ = std::chrono::steady_clock::now();
}

void ProtocolWorker::take_and_report(redis::Connection& redis) {
    if (std::chrono::steady_clock::now() - last_beat_ >= options_.heartbeat_ttl / 3) beat(redis);
    // A short block keeps the heartbeat going while the list is empty.
    const auto message = redis
                             .command({"BLMOVE", keys_.ready, keys_.processing(options_.worker_id),
                                       "LEFT", "RIGHT", "0.1"})
                             .optional_string();
    if (!message) return;
    std::this_thread::sleep_for(options_.work);
    const std::string id = message->substr(0, message->rfind(':'));
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++runs_[id];
    }
    ++handled_;
    const auto accepted = redis
                              .command({"EVAL", std::string(protocol::kCompleteScript.text()), "2",
                                        keys_.processing(options_.worker_id), keys_.done, *message,
                                        *message + " " + options_.report})
                              .integer();
    if (accepted != 1) ++refused_;
}

std::map<std::string, int> ProtocolWorker::runs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return runs_;
}

std::string ProtocolWorker::last_error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_error_;
}

}  // namespace rowpump::testing
