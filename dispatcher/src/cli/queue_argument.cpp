#include "cli/queue_argument.hpp"

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

std::optional<QueueSource> source_or_complain(const Config& config, const QueueConfig& queue,
                                              const std::string& shard, const std::string& option,
                                              std::ostream& err) {
    if (queue.shards.empty()) {
        if (shard.empty()) return QueueSource{config, queue};
        err << "queue '" << queue.name << "' has no shards; leave out " << option << "\n";
        return std::nullopt;
    }
    std::string known;
    for (const auto& source : queue_sources(config, queue)) {
        const auto& name = queue.shards[*source.queue.shard].name;
        if (name == shard) return source;
        known += (known.empty() ? "" : ", ") + name;
    }
    err << "queue '" << queue.name << "' has shards (" << known << "): "
        << (shard.empty() ? "give " + option + ", the shard whose rows to change"
                          : "there is no shard '" + shard + "'")
        << "\n";
    return std::nullopt;
}

}  // namespace rowpump
