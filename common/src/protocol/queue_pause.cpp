#include "rowpump/common/protocol/queue_pause.hpp"

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/protocol/queue_gauges.hpp"

namespace rowpump::protocol {

bool pause_queue(redis::Connection& redis, std::string_view queue, const std::string& who) {
    const auto reply =
        redis.command({"SET", keys_for(queue).paused, who + " " + std::to_string(unix_ms()), "NX"});
    return !reply.is_nil();
}

bool resume_queue(redis::Connection& redis, std::string_view queue) {
    return redis.command({"DEL", keys_for(queue).paused}).integer() == 1;
}

std::optional<std::string> paused_by(redis::Connection& redis, std::string_view queue) {
    return redis.command({"GET", keys_for(queue).paused}).optional_string();
}

}  // namespace rowpump::protocol
