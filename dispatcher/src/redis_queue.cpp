#include "rowpump/dispatcher/redis_queue.hpp"

#include <algorithm>

namespace rowpump {

namespace {
// Values per RPUSH: big enough to amortise, small enough not to stall Redis.
constexpr std::size_t kPushChunk = 1000;
}  // namespace

redis::Options redis_options(const RedisConfig& config) {
    redis::Options options;
    options.host = config.host;
    options.port = config.port;
    options.user = config.user;
    options.password = config.password;
    options.connect_timeout = config.connect_timeout;
    return options;
}

RedisQueue::RedisQueue(redis::Connection conn, const QueueConfig& queue)
    : conn_(std::move(conn)), queue_(queue), keys_(protocol::keys_for(queue.name)) {}

RedisQueue RedisQueue::open(const RedisConfig& config, const QueueConfig& queue) {
    RedisQueue rq(redis::Connection::connect(redis_options(config)), queue);
    rq.reap_sha_ = rq.conn_.command({"SCRIPT", "LOAD", protocol::kReapScript}).string();
    return rq;
}

void RedisQueue::announce() {
    std::string values;
    if (queue_.on_success) {
        for (const auto& name : queue_.on_success->placeholders) values += (values.empty() ? "" : ",") + name;
    }
    conn_.command({"HSET", keys_.meta, "values", values, "lease", format_duration(queue_.lease), "table",
                   queue_.table});
}

std::int64_t RedisQueue::ready_length() { return conn_.command({"LLEN", keys_.ready}).integer(); }

void RedisQueue::append_stats(const StatsDelta& stats, std::size_t& replies) {
    for (const auto& [field, amount] : stats) {
        if (amount == 0) continue;
        conn_.append({"HINCRBY", keys_.stats, field, std::to_string(amount)});
        ++replies;
    }
}

void RedisQueue::push(const std::vector<std::string>& messages) {
    std::size_t replies = 0;
    for (std::size_t start = 0; start < messages.size(); start += kPushChunk) {
        std::vector<std::string> args{"RPUSH", keys_.ready};
        const auto end = std::min(messages.size(), start + kPushChunk);
        args.insert(args.end(), messages.begin() + static_cast<std::ptrdiff_t>(start),
                    messages.begin() + static_cast<std::ptrdiff_t>(end));
        conn_.append(args);
        ++replies;
    }
    append_stats({{"dispatched", static_cast<std::int64_t>(messages.size())}}, replies);
    conn_.read_replies(replies);
}

std::vector<std::string> RedisQueue::peek_done(std::int64_t max) {
    return conn_.command({"LRANGE", keys_.done, "0", std::to_string(max - 1)}).strings();
}

void RedisQueue::ack_done(std::size_t count, const std::vector<std::string>& bad, const StatsDelta& stats) {
    conn_.append({"LTRIM", keys_.done, std::to_string(count), "-1"});
    std::size_t replies = 1;
    append_aside(bad, stats, replies);
    conn_.read_replies(replies);
}

void RedisQueue::move_aside(const std::vector<std::string>& bad, const StatsDelta& stats) {
    std::size_t replies = 0;
    append_aside(bad, stats, replies);
    conn_.read_replies(replies);
}

void RedisQueue::append_aside(const std::vector<std::string>& bad, const StatsDelta& stats, std::size_t& replies) {
    if (!bad.empty()) {
        std::vector<std::string> args{"RPUSH", keys_.bad};
        args.insert(args.end(), bad.begin(), bad.end());
        conn_.append(args);
        ++replies;
    }
    append_stats(stats, replies);
}

std::vector<std::pair<std::string, std::vector<std::string>>> RedisQueue::reap_dead_workers() {
    std::vector<std::pair<std::string, std::vector<std::string>>> reaped;
    for (const auto& worker : conn_.command({"SMEMBERS", keys_.workers}).strings()) {
        auto taken = conn_.command({"EVALSHA", reap_sha_, "3", keys_.heartbeat(worker),
                                    keys_.processing(worker), keys_.workers, worker})
                         .strings();
        if (!taken.empty()) reaped.emplace_back(worker, std::move(taken));
    }
    return reaped;
}

}  // namespace rowpump
