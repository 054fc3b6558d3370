#pragma once

// Dispatches as Redis itself saw them: MONITOR stamps every command with the server's clock
// when it runs, so push times do not depend on any client's clock or on who pushed.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/common/redis/redis.hpp"

namespace rowpump::testing {

// One MONITOR line: `1700000000.123456 [0 127.0.0.1:51234] "RPUSH" "key" "value"`.
struct MonitorLine {
    std::int64_t micros = 0;  // server time
    std::string source;       // "0 127.0.0.1:51234", or "0 lua" inside scripts
    std::vector<std::string> args;
};
std::optional<MonitorLine> parse_monitor_line(const std::string& text);

// One RPUSH to a ready list, whether a client sent it or a script ran it.
struct Push {
    std::int64_t micros = 0;            // server time
    std::string client;                 // "127.0.0.1:51234": who sent it, or ran the script
    std::vector<std::string> messages;  // the ready messages pushed
};

// Watches the RPUSHes to one ready list from the moment it is constructed.
class PushMonitor {
public:
    PushMonitor(redis::Connection connection, std::string ready_key);

    // Reads MONITOR until `count` more pushes were seen; false if `timeout` passed first
    // (after a timeout with no command at all, the monitor is unusable). Throws on a line that
    // is not MONITOR output.
    bool wait_for(std::size_t count, std::chrono::milliseconds timeout);
    const std::vector<Push>& pushes() const { return pushes_; }
    // Every message pushed, in order.
    std::vector<std::string> messages() const;
    // The shortest time between two consecutive pushes, in microseconds; INT64_MAX with fewer
    // than two.
    std::int64_t min_gap() const;

private:
    redis::Connection connection_;
    std::string ready_key_;
    std::vector<Push> pushes_;
    std::string last_client_;  // a script's commands follow the client's EVAL line
};

}  // namespace rowpump::testing
