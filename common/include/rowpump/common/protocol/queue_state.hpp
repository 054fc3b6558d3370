#pragma once

// What Redis holds for a queue right now, read for `rowpump status`.

#include <cstdint>
#include <string_view>

#include "rowpump/common/protocol/queue_stats.hpp"
#include "rowpump/common/redis/redis.hpp"

namespace rowpump::protocol {

struct QueueState {
    std::int64_t ready = 0;      // messages in the ready list
    std::int64_t in_flight = 0;  // messages in the processing lists of listed workers
    std::int64_t workers = 0;    // listed workers
    Stats stats;
};

QueueState read_queue_state(redis::Connection& redis, std::string_view queue);

}  // namespace rowpump::protocol
