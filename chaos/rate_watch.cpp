#include "rate_watch.hpp"

#include <map>
#include <optional>
#include <vector>

#include "rowpump/common/keys.hpp"
#include "rowpump/common/redis.hpp"

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
                pushes_.insert(
                    {epoch,
                     {std::stoll(entry.substr(0, colon)), std::stoll(entry.substr(colon + 1))}});
            }
        } catch (const std::exception&) {
            redis.reset();  // Redis restarting: connect again
        }
        std::this_thread::sleep_for(100ms);
    }
}

RateVerdict RateWatch::verdict(std::int64_t limit, std::chrono::microseconds period) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> by_epoch;
    for (const auto& [epoch, push] : pushes_) by_epoch[epoch].push_back(push);
    RateVerdict v;
    for (const auto& [epoch, pushes] : by_epoch) {
        for (std::size_t i = 0; i < pushes.size(); ++i) {
            ++v.pushes;
            v.rows += pushes[i].second;
            std::int64_t in_window = 0;
            for (std::size_t j = i;
                 j < pushes.size() && pushes[j].first < pushes[i].first + period.count(); ++j) {
                in_window += pushes[j].second;
            }
            v.worst = std::max(v.worst, in_window);
            if (in_window > limit) ++v.violations;
        }
    }
    return v;
}

}  // namespace rowpump::chaos
