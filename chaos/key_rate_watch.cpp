#include "key_rate_watch.hpp"

#include <charconv>
#include <optional>

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/redis/redis.hpp"

namespace rowpump::chaos {

using namespace std::chrono_literals;

namespace {

// A whole non-negative number, all of `text`.
std::optional<std::int64_t> whole_number(std::string_view text) {
    std::int64_t n = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (error != std::errc() || end != text.data() + text.size() || text.empty() || n < 0) {
        return std::nullopt;
    }
    return n;
}

}  // namespace

std::int64_t add_key_rate_field(KeyPushes& pushes, int epoch, const std::string& field,
                                const std::string& value, std::chrono::microseconds period) {
    const std::string key =
        field == "null" ? "(null)" : (field.rfind('=', 0) == 0 ? field.substr(1) : std::string());
    std::int64_t skipped = 0;
    std::string_view rest = value;
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const std::string_view entry = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const auto colon = entry.find(':');
        const auto until = whole_number(entry.substr(0, colon));
        const auto rows = whole_number(colon == std::string_view::npos ? std::string_view()
                                                                       : entry.substr(colon + 1));
        if (key.empty() || !until || !rows || *rows == 0 || *until < period.count()) {
            ++skipped;
            continue;
        }
        pushes[key].insert({epoch, *until - period.count(), *rows});
    }
    return skipped;
}

KeyRateWatch::KeyRateWatch(RedisAddress redis, std::string queue, std::chrono::microseconds period,
                           const std::atomic<int>& epoch)
    : redis_(std::move(redis)),
      key_(protocol::keys_for(queue).key_rate),
      period_(period),
      epoch_(epoch),
      thread_([this] { run(); }) {}

KeyRateWatch::~KeyRateWatch() {
    stop();
}

void KeyRateWatch::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

void KeyRateWatch::run() {
    std::optional<redis::Connection> redis;
    while (!stop_) {
        try {
            if (!redis) redis = redis::Connection::connect(redis_);
            // The epoch read before the hash, as RateWatch does: an entry read after a restart
            // that lost the data is never filed under the epoch before it.
            const int epoch = epoch_;
            const auto fields = redis->command({"HGETALL", key_}).strings();
            std::lock_guard<std::mutex> lock(mutex_);
            for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
                malformed_ += add_key_rate_field(pushes_, epoch, fields[i], fields[i + 1], period_);
            }
        } catch (const std::exception&) {
            redis.reset();  // Redis restarting: connect again
        }
        std::this_thread::sleep_for(100ms);
    }
}

KeyPushes KeyRateWatch::pushes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pushes_;
}

std::int64_t KeyRateWatch::malformed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return malformed_;
}

}  // namespace rowpump::chaos
