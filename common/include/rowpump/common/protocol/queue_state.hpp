#pragma once

// What Redis holds for a queue right now, read for `rowpump status`.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rowpump/common/protocol/queue_stats.hpp"
#include "rowpump/common/protocol/worker_info.hpp"
#include "rowpump/common/redis/redis.hpp"

namespace rowpump::protocol {

// A listed worker, for the workers view.
struct WorkerState {
    std::string id;
    WorkerInfo info;                 // what its heartbeat's value says (display only)
    std::int64_t in_hand = 0;        // its processing list's length
    std::int64_t heartbeat_ms = -1;  // the heartbeat's PTTL; -1: the key is gone (being reaped)
};

struct QueueState {
    static constexpr std::size_t kWorkersShown = 50;

    std::int64_t ready = 0;                // messages in the ready list
    std::int64_t in_flight = 0;            // messages in the processing lists of listed workers
    std::int64_t workers = 0;              // listed workers
    std::int64_t live_workers = 0;         // listed workers whose heartbeat key exists
    std::vector<WorkerState> worker_list;  // the first kWorkersShown listed workers, by id
    Stats stats;
};

QueueState read_queue_state(redis::Connection& redis, std::string_view queue);

}  // namespace rowpump::protocol
