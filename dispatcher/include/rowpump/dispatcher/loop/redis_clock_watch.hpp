#pragma once

// Whether the Redis server's wall clock stepped since the reaper last looked. Redis expires
// keys by its wall clock: a step forward of the Redis host's clock by more than the workers'
// heartbeat TTL expires every heartbeat at once, although every worker is alive. The reaper
// compares how far the server's clock (TIME) moved between two reaps with how far our
// monotonic clock did; after a step forward it takes nothing back for kStepGrace, time for
// every live worker to beat again (a worker beats every third of its TTL, so any TTL up to
// 3 x kStepGrace is covered), and then only the workers that did not.

#include <chrono>
#include <cstdint>
#include <optional>

#include "rowpump/dispatcher/loop/pacing.hpp"

namespace rowpump {

class RedisClockWatch {
public:
    // A difference smaller than this is the round trip's, not a step.
    static constexpr std::chrono::milliseconds kTolerance{1000};
    static constexpr std::chrono::milliseconds kStepGrace{60000};

    struct Look {
        bool reap = true;  // false while a step's grace lasts
        // The step seen at this look (positive: forward), if one was.
        std::optional<std::chrono::milliseconds> step;
    };
    // `server_ms`: the server's TIME in ms, read at our monotonic `now`.
    Look look(std::int64_t server_ms, TimePoint now);

private:
    std::optional<std::int64_t> last_server_ms_;
    TimePoint last_now_{};
    TimePoint hold_until_{};
};

}  // namespace rowpump
