#include "observe/queue_redis_view.hpp"

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/protocol/queue_pause.hpp"

namespace rowpump {

QueueRedisView read_queue_redis_view(redis::Connection& redis, const std::string& queue) {
    const auto keys = protocol::keys_for(queue);
    QueueRedisView v;
    v.state = protocol::read_queue_state(redis, queue);
    v.paused_by = protocol::paused_by(redis, queue);
    v.gauges = protocol::parse_gauges(redis.command({"HGETALL", keys.gauges}).strings());
    v.key_gauges = protocol::read_key_gauges(redis, queue);
    v.key_limits = protocol::read_key_limits(redis, queue);
    v.read_at_ms = protocol::unix_ms();
    for (auto& d :
         protocol::parse_dispatchers(redis.command({"HGETALL", keys.dispatchers}).strings())) {
        if (v.read_at_ms - d.at_ms <= protocol::kDispatcherFresh.count())
            v.dispatchers.push_back(std::move(d));
    }
    return v;
}

}  // namespace rowpump
