#include "rowpump/testing/queue_redis.hpp"

#include <optional>
#include <stdexcept>

namespace rowpump::testing {

std::string ready_key(const std::string& queue) {
    return protocol::keys_for(queue).ready;
}

std::int64_t list_length(redis::Connection& redis, const std::string& key) {
    return redis.command({"LLEN", key}).integer();
}

std::vector<std::string> list_all(redis::Connection& redis, const std::string& key) {
    constexpr std::int64_t kChunk = 10000;
    std::vector<std::string> out;
    for (std::int64_t start = 0;; start += kChunk) {
        std::vector<std::string> part =
            redis
                .command({"LRANGE", key, std::to_string(start), std::to_string(start + kChunk - 1)})
                .strings();
        out.insert(out.end(), part.begin(), part.end());
        if (static_cast<std::int64_t>(part.size()) < kChunk) return out;
    }
}

std::vector<Task> parse_ready_all(const std::vector<std::string>& messages) {
    std::vector<Task> tasks;
    tasks.reserve(messages.size());
    for (const auto& m : messages) {
        std::string error;
        std::optional<Task> task = protocol::parse_ready(m, error);
        if (!task) throw std::runtime_error("malformed ready message '" + m + "': " + error);
        tasks.push_back(std::move(*task));
    }
    return tasks;
}

Consumer::Consumer(ConsumerOptions options)
    : options_(std::move(options)),
      ready_(protocol::keys_for(options_.queue).ready),
      done_(protocol::keys_for(options_.queue).done),
      thread_([this] { run(); }) {}

Consumer::~Consumer() {
    stop();
}

void Consumer::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

void Consumer::run() {
    std::optional<redis::Connection> redis;
    while (!stop_) {
        try {
            if (!redis || redis->broken()) redis = redis::Connection::connect(options_.redis);
            pop_once(*redis);
        } catch (const std::exception& e) {
            ++errors_;
            std::lock_guard<std::mutex> lock(mutex_);
            last_error_ = e.what();
            redis.reset();
        }
        std::this_thread::sleep_for(options_.pause);
    }
}

void Consumer::pop_once(redis::Connection& redis) {
    std::vector<std::string> popped =
        redis.command({"LPOP", ready_, std::to_string(options_.per_pop)}).strings();
    if (popped.empty()) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        messages_.insert(messages_.end(), popped.begin(), popped.end());
    }
    if (!options_.report_ok) return;
    std::vector<std::string> push{"RPUSH", done_};
    for (const auto& message : popped) {
        std::string error;
        std::optional<Task> task = protocol::parse_ready(message, error);
        if (!task) continue;  // the test sees it in messages() and fails there
        protocol::Done done;
        done.task = *task;
        done.verb = Verb::success;
        done.values = options_.ok_values;
        push.push_back(protocol::format_done(done));
    }
    if (push.size() > 2) redis.command(push);
}

std::vector<std::string> Consumer::messages() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
}

std::size_t Consumer::count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_.size();
}

std::set<std::string> Consumer::ids() const {
    std::set<std::string> ids;
    for (const auto& m : messages()) ids.insert(m.substr(0, m.find(':')));
    return ids;
}

std::string Consumer::last_error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_error_;
}

}  // namespace rowpump::testing
