#include "rate_watch.hpp"

#include <algorithm>
#include <optional>

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/redis/redis.hpp"

namespace rowpump::chaos {

using namespace std::chrono_literals;

RateWatch::RateWatch(RedisAddress redis, std::string queue, const std::atomic<int>& epoch)
    : redis_(std::move(redis)),
      key_(protocol::keys_for(queue).window),
      epoch_(epoch),
      thread_([this] { run(); }) {}

RateWatch::~RateWatch() {
    stop();
}

void RateWatch::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

void RateWatch::run() {
    std::optional<redis::Connection> redis;
    while (!stop_) {
        try {
            if (!redis) redis = redis::Connection::connect(redis_);
            // The epoch read before the list: an entry read after a restart that lost the data
            // is never filed under the epoch before it.
            const int epoch = epoch_;
            for (const auto& entry : redis->command({"LRANGE", key_, "0", "-1"}).strings()) {
                const auto colon = entry.find(':');
                if (colon == std::string::npos) continue;
                std::lock_guard<std::mutex> lock(mutex_);
                pushes_.insert({epoch, std::stoll(entry.substr(0, colon)),
                                std::stoll(entry.substr(colon + 1))});
            }
        } catch (const std::exception&) {
            redis.reset();  // Redis restarting: connect again
        }
        std::this_thread::sleep_for(100ms);
    }
}

RateVerdict RateWatch::verdict(std::int64_t limit, std::chrono::microseconds period) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return judge_rate(pushes_, limit, period);
}

RateVerdict judge_rate(const std::set<WindowPush>& pushes, std::int64_t limit,
                       std::chrono::microseconds period) {
    RateVerdict v;
    for (auto push = pushes.begin(); push != pushes.end(); ++push) {
        ++v.pushes;
        v.rows += push->rows;
        std::int64_t in_window = 0;
        for (auto later = push; later != pushes.end() && later->epoch == push->epoch &&
                                later->micros < push->micros + period.count();
             ++later) {
            in_window += later->rows;
        }
        v.worst = std::max(v.worst, in_window);
        if (in_window >= limit) ++v.full;
        if (in_window > limit) {
            ++v.violations;
            if (v.examples.size() < 10) {
                v.examples.push_back(std::to_string(in_window) + " rows pushed within " +
                                     std::to_string(period.count()) + " µs from the push at " +
                                     std::to_string(push->micros) +
                                     " µs (Redis server time), limit " + std::to_string(limit));
            }
        }
    }
    return v;
}

}  // namespace rowpump::chaos
