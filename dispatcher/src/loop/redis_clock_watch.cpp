#include "rowpump/dispatcher/loop/redis_clock_watch.hpp"

namespace rowpump {

RedisClockWatch::Look RedisClockWatch::look(std::int64_t server_ms, TimePoint now) {
    Look look;
    if (last_server_ms_) {
        const auto ours =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - last_now_).count();
        const std::chrono::milliseconds step{(server_ms - *last_server_ms_) - ours};
        if (step >= kTolerance || step <= -kTolerance) look.step = step;
        if (step >= kTolerance) hold_until_ = now + kStepGrace;
    }
    last_server_ms_ = server_ms;
    last_now_ = now;
    look.reap = now >= hold_until_;
    return look;
}

}  // namespace rowpump
