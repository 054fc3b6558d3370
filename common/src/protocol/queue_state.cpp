#include "rowpump/common/protocol/queue_state.hpp"

#include "rowpump/common/protocol/keys.hpp"

namespace rowpump::protocol {

QueueState read_queue_state(redis::Connection& redis, std::string_view queue) {
    QueueState s;
    const auto keys = keys_for(queue);
    s.ready = redis.command({"LLEN", keys.ready}).integer();
    const auto workers = redis.command({"SMEMBERS", keys.workers}).strings();
    s.workers = static_cast<std::int64_t>(workers.size());
    for (const auto& w : workers)
        s.in_flight += redis.command({"LLEN", keys.processing(w)}).integer();
    const auto fields = redis.command({"HGETALL", keys.stats}).strings();
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2)
        s.stats[fields[i]] = std::stoll(fields[i + 1]);
    return s;
}

}  // namespace rowpump::protocol
