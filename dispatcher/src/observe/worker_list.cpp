#include "observe/worker_list.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "rowpump/common/log_text.hpp"

namespace rowpump {

namespace {

using nlohmann::json;

// When the worker last beat: its heartbeat TTL less what is left of it. nullopt when the
// worker does not say its TTL (an older SDK) or the key is gone.
std::optional<double> heartbeat_age_seconds(const protocol::WorkerState& w) {
    if (!w.info.ttl_ms || w.heartbeat_ms < 0) return std::nullopt;
    return static_cast<double>(std::max<std::int64_t>(*w.info.ttl_ms - w.heartbeat_ms, 0)) / 1000;
}

std::string or_dash(const std::string& text) {
    return text.empty() ? "-" : text;
}

}  // namespace

json worker_list_json(const protocol::QueueState& state) {
    json list = json::array();
    for (const auto& w : state.worker_list) {
        auto optional = [](const auto& v) { return v ? json(*v) : json(nullptr); };
        list.push_back({{"id", log_text(w.id, protocol::kMaxWorkerInfoText)},
                        {"host", w.info.host},
                        {"lang", w.info.lang},
                        {"version", w.info.version},
                        {"in_hand", w.in_hand},
                        {"done", optional(w.info.done)},
                        {"alive", w.heartbeat_ms >= 0},
                        {"heartbeat_age_seconds", optional(heartbeat_age_seconds(w))}});
    }
    return list;
}

void print_worker_list(std::ostream& out, const protocol::QueueState& state) {
    for (const auto& w : state.worker_list) {
        const auto age = heartbeat_age_seconds(w);
        const std::string done = w.info.done ? std::to_string(*w.info.done) : "-";
        const std::string beat = w.heartbeat_ms < 0 ? "gone"
                                 : age ? std::to_string(static_cast<long long>(*age)) + "s ago"
                                       : "alive";
        char line[512];
        std::snprintf(line, sizeof line,
                      "  worker %-30s host %-20s %-6s %-8s in hand %4lld done %9s heartbeat %s\n",
                      log_text(w.id, protocol::kMaxWorkerInfoText).c_str(),
                      or_dash(w.info.host).c_str(), or_dash(w.info.lang).c_str(),
                      or_dash(w.info.version).c_str(), static_cast<long long>(w.in_hand),
                      done.c_str(), beat.c_str());
        out << line;
    }
    const auto hidden = state.workers - static_cast<std::int64_t>(state.worker_list.size());
    if (hidden > 0) out << "  ... and " << hidden << " more workers\n";
}

}  // namespace rowpump
