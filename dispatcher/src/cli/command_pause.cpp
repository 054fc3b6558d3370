#include <ostream>

#include "cli/queue_argument.hpp"
#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/protocol/queue_gauges.hpp"
#include "rowpump/common/protocol/queue_pause.hpp"
#include "rowpump/dispatcher/cli/commands.hpp"

namespace rowpump {

int command_pause(const Config& config, const std::string& queue_name, bool pause,
                  std::ostream& out, std::ostream& err) {
    const auto* queue = find_queue_or_complain(config, queue_name, err);
    if (queue == nullptr) return 1;
    try {
        auto redis =
            redis::Connection::connect_for(config.redis, protocol::keys_for(queue->name).prefix);
        const bool changed =
            pause ? protocol::pause_queue(redis, queue->name,
                                          "rowpump pause on " + protocol::dispatcher_id())
                  : protocol::resume_queue(redis, queue->name);
        out << "queue " << queue->name << ": "
            << (pause ? (changed ? "paused: dispatchers claim nothing until `rowpump resume`"
                                 : "was paused already")
                      : (changed ? "resumed" : "was not paused"))
            << "\n";
    } catch (const std::exception& e) {
        err << "redis: " << e.what() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace rowpump
