#include "rowpump/common/protocol/worker_info.hpp"

#include <unistd.h>

#include <climits>
#include <vector>

#include "rowpump/common/log_text.hpp"
#include "rowpump/common/protocol/messages.hpp"

namespace rowpump::protocol {

namespace {

std::optional<std::int64_t> count(std::string_view text) {
    if (text.empty() || text.size() > 18) return std::nullopt;
    std::int64_t n = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + (c - '0');
    }
    return n;
}

}  // namespace

std::string format_worker_info(const WorkerInfo& info) {
    std::string out;
    auto field = [&](std::string_view name, std::string_view value) {
        if (!out.empty()) out += ';';
        out += name;
        out += '=';
        out += percent_encode(value.substr(0, kMaxWorkerInfoText));
    };
    field("host", info.host);
    field("lang", info.lang);
    field("version", info.version);
    if (info.done) field("done", std::to_string(*info.done));
    if (info.ttl_ms) field("ttl", std::to_string(*info.ttl_ms));
    return out;
}

WorkerInfo parse_worker_info(std::string_view value) {
    WorkerInfo info;
    value = value.substr(0, kMaxWorkerInfoBytes);
    while (!value.empty()) {
        const auto end = value.find(';');
        const auto field = value.substr(0, end);
        value = end == std::string_view::npos ? std::string_view() : value.substr(end + 1);
        const auto eq = field.find('=');
        if (eq == std::string_view::npos) continue;
        const auto name = field.substr(0, eq);
        const auto decoded = percent_decode(field.substr(eq + 1));
        if (!decoded) continue;
        auto text = [&] { return log_text(*decoded, kMaxWorkerInfoText); };
        if (name == "host") info.host = text();
        if (name == "lang") info.lang = text();
        if (name == "version") info.version = text();
        if (name == "done") info.done = count(*decoded);
        if (name == "ttl") info.ttl_ms = count(*decoded);
    }
    return info;
}

std::string host_name() {
    char name[HOST_NAME_MAX + 1] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "";
    return name;
}

}  // namespace rowpump::protocol
