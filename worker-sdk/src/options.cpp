#include "options.hpp"

#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/common/redis/redis_route.hpp"

namespace rowpump::details {

namespace {

constexpr milliseconds kMinHeartbeatTtl{200};

std::string ms_text(milliseconds ms) {
    return std::to_string(ms.count()) + " ms";
}

std::string sanitized_hostname() {
    char buffer[256] = {};
    if (gethostname(buffer, sizeof buffer - 1) != 0 || buffer[0] == '\0') return "worker";
    std::string host(buffer);
    host = host.substr(0, host.find('.'));  // the short name is enough to find the machine
    for (char& c : host) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
        if (!ok) c = '-';
    }
    return host.empty() ? "worker" : host.substr(0, 40);
}

void check(bool ok, const std::string& message) {
    if (!ok) throw Error("invalid worker options: " + message);
}

}  // namespace

std::string default_worker_id() {
    std::random_device random;
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%06x", static_cast<unsigned>(random() & 0xFFFFFFu));
    return sanitized_hostname() + "-" + std::to_string(getpid()) + "-" + suffix;
}

WorkerOptions validated(WorkerOptions o) {
    check(!o.queue.empty(), "queue is required");
    check(protocol::is_valid_name(o.queue),
          "queue '" + o.queue + "' must be 1 to 64 characters from [A-Za-z0-9_.-]");
    if (o.worker_id.empty()) o.worker_id = default_worker_id();
    check(protocol::is_valid_name(o.worker_id),
          "worker_id '" + o.worker_id + "' must be 1 to 64 characters from [A-Za-z0-9_.-]");
    const auto address_problem = redis::address_problem(o.redis);
    check(address_problem.empty(), address_problem);
    check(o.threads >= 1 && o.threads <= 1024,
          "threads must be between 1 and 1024, not " + std::to_string(o.threads));
    check(o.heartbeat_ttl >= kMinHeartbeatTtl, "heartbeat_ttl must be at least " +
                                                   ms_text(kMinHeartbeatTtl) + ", not " +
                                                   ms_text(o.heartbeat_ttl));
    if (o.heartbeat_interval.count() == 0) o.heartbeat_interval = o.heartbeat_ttl / 3;
    check(o.heartbeat_interval.count() > 0 && o.heartbeat_interval < o.heartbeat_ttl,
          "heartbeat_interval (" + ms_text(o.heartbeat_interval) +
              ") must be positive and shorter than heartbeat_ttl (" + ms_text(o.heartbeat_ttl) +
              ")");
    check(o.fetch_timeout.count() > 0, "fetch_timeout must be positive");
    check(o.batch >= 0 && o.batch <= 1000,
          "batch must be 0 (adaptive) or between 1 and 1000, not " + std::to_string(o.batch));
    check(o.queue_wait.count() >= 0, "queue_wait must not be negative");
    check(o.timeout.count() >= 0, "timeout must not be negative (0: no deadline)");
    return o;
}

}  // namespace rowpump::details
