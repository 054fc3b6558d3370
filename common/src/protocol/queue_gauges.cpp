#include "rowpump/common/protocol/queue_gauges.hpp"

#include <algorithm>

#include <unistd.h>

#include <cstdlib>

namespace rowpump::protocol {

namespace {

std::optional<std::int64_t> to_int(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0') return std::nullopt;
    return value;
}

}  // namespace

std::vector<std::string> gauge_fields(const QueueGauges& g) {
    std::vector<std::string> out{
        "due",   std::to_string(g.due),  "due_capped", g.due_capped ? "1" : "0", "leader", g.leader,
        "at_ms", std::to_string(g.at_ms)};
    if (g.oldest_due_age) {
        out.push_back("oldest_due_age_ms");
        out.push_back(std::to_string(g.oldest_due_age->count()));
    }
    return out;
}

std::optional<QueueGauges> parse_gauges(const std::vector<std::string>& fields) {
    if (fields.empty()) return std::nullopt;
    QueueGauges g;
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
        const auto& name = fields[i];
        const auto number = to_int(fields[i + 1]);
        if (name == "leader") g.leader = fields[i + 1];
        if (!number) continue;
        if (name == "due") g.due = *number;
        if (name == "due_capped") g.due_capped = *number != 0;
        // A row whose due_since lies ahead has waited no time (and a writer may be anyone).
        if (name == "oldest_due_age_ms")
            g.oldest_due_age = Millis(std::max<std::int64_t>(*number, 0));
        if (name == "at_ms") g.at_ms = *number;
    }
    return g;
}

std::string format_dispatcher_entry(const std::string& role, std::int64_t at_ms) {
    return role + " " + std::to_string(at_ms);
}

std::vector<DispatcherEntry> parse_dispatchers(const std::vector<std::string>& fields) {
    std::vector<DispatcherEntry> out;
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
        const auto& value = fields[i + 1];
        const auto space = value.find(' ');
        if (space == std::string::npos) continue;
        const auto at = to_int(value.substr(space + 1));
        const auto role = value.substr(0, space);
        if (!at || fields[i].empty() || (role != "leader" && role != "standby")) continue;
        out.push_back({fields[i], role, *at});
    }
    return out;
}

std::string dispatcher_id() {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    return std::string(host[0] ? host : "unknown") + ":" + std::to_string(getpid());
}

std::int64_t unix_ms() {
    using namespace std::chrono;
    return duration_cast<Millis>(system_clock::now().time_since_epoch()).count();
}

}  // namespace rowpump::protocol
