#include "rowpump/common/protocol/queue_state.hpp"

#include <algorithm>

#include "rowpump/common/protocol/keys.hpp"

namespace rowpump::protocol {

QueueState read_queue_state(redis::Connection& redis, std::string_view queue) {
    QueueState s;
    const auto keys = keys_for(queue);
    s.ready = redis.command({"LLEN", keys.ready}).integer();
    auto workers = redis.command({"SMEMBERS", keys.workers}).strings();
    std::sort(workers.begin(), workers.end());
    s.workers = static_cast<std::int64_t>(workers.size());
    // One pipelined round trip: every worker's tasks in hand and heartbeat, and what the first
    // kWorkersShown say about themselves (read only up to kMaxWorkerInfoBytes).
    for (std::size_t i = 0; i < workers.size(); ++i) {
        redis.append({"LLEN", keys.processing(workers[i])});
        redis.append({"PTTL", keys.heartbeat(workers[i])});
        if (i < QueueState::kWorkersShown) {
            redis.append({"GETRANGE", keys.heartbeat(workers[i]), "0",
                          std::to_string(kMaxWorkerInfoBytes - 1)});
        }
    }
    const std::size_t shown = std::min(workers.size(), QueueState::kWorkersShown);
    auto replies = redis.read_replies(2 * workers.size() + shown);
    std::size_t r = 0;
    for (std::size_t i = 0; i < workers.size(); ++i) {
        WorkerState w{workers[i], {}, replies[r++].integer(), replies[r++].integer()};
        s.in_flight += w.in_hand;
        if (w.heartbeat_ms >= 0) ++s.live_workers;  // -1: no TTL (not a heartbeat), -2: gone
        if (w.heartbeat_ms < 0) w.heartbeat_ms = -1;
        if (i < shown) {
            w.info = parse_worker_info(replies[r++].string());
            s.worker_list.push_back(std::move(w));
        }
    }
    const auto fields = redis.command({"HGETALL", keys.stats}).strings();
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2)
        s.stats[fields[i]] = std::stoll(fields[i + 1]);
    return s;
}

}  // namespace rowpump::protocol
