#pragma once

// Refused HTTP requests as warnings, at most one line per second: a flood of bad requests
// cannot flood the log. The next line written says how many were left out before it.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace rowpump {

class RefusalLog {
public:
    // `what` is the request as a client sent it (method and path, or what was read of it);
    // all three texts are escaped here (log_text).
    void refused(const std::string& remote, const std::string& what, int status,
                 const std::string& why);

private:
    std::mutex mutex_;
    std::chrono::steady_clock::time_point last_{};
    std::int64_t left_out_ = 0;
};

}  // namespace rowpump
