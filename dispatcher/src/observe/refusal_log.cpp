#include "observe/refusal_log.hpp"

#include <spdlog/spdlog.h>

#include "rowpump/common/log_text.hpp"

namespace rowpump {

namespace {

constexpr std::chrono::seconds kInterval{1};

}  // namespace

void RefusalLog::refused(const std::string& remote, const std::string& what, int status,
                         const std::string& why) {
    std::int64_t left_out = 0;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto now = std::chrono::steady_clock::now();
        if (last_ != std::chrono::steady_clock::time_point{} && now - last_ < kInterval) {
            ++left_out_;
            return;
        }
        last_ = now;
        left_out = left_out_;
        left_out_ = 0;
    }
    spdlog::warn("http: refused {} from {} ({}): {}{}", log_text(what), log_text(remote), status,
                 log_text(why),
                 left_out ? " (and " + std::to_string(left_out) +
                                " more refused request(s) not logged before this one)"
                          : "");
}

}  // namespace rowpump
