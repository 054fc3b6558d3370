#include "queue_argument.hpp"

#include <ostream>

namespace rowpump {

const QueueConfig* find_queue_or_complain(const Config& config, const std::string& name,
                                          std::ostream& err) {
    if (const auto* queue = config.find_queue(name)) return queue;
    std::string known;
    for (const auto& q : config.queues) known += (known.empty() ? "" : ", ") + q.name;
    err << "unknown queue '" << name << "' (" << config.file << " configures: " << known << ")\n";
    return nullptr;
}

bool unsharded_or_complain(const QueueConfig& queue, std::ostream& err) {
    if (queue.shards.empty()) return true;
    err << "queue '" << queue.name << "': " << kShardedRowsNotYet << "\n";
    return false;
}

}  // namespace rowpump
