#include "rowpump/dispatcher/loop/outage_log.hpp"

#include <spdlog/spdlog.h>

namespace rowpump {

namespace {

std::string elapsed(TimePoint from, TimePoint to) {
    return format_duration(std::chrono::duration_cast<Millis>(to - from));
}

}  // namespace

OutageLog::OutageLog(std::string subject, Millis summary_every, Sink sink)
    : subject_(std::move(subject)), summary_every_(summary_every), sink_(std::move(sink)) {}

void OutageLog::line(spdlog::level::level_enum level, const std::string& text) {
    if (sink_) {
        sink_(level, subject_ + ": " + text);
    } else {
        spdlog::log(level, "{}: {}", subject_, text);
    }
}

void OutageLog::failed(const std::string& what, bool transient, Millis retry_in, TimePoint now) {
    ++attempts_;
    any_error_ = any_error_ || !transient;
    const auto level = any_error_ ? spdlog::level::err : spdlog::level::warn;
    const std::string attempt = what + "; retrying in " + format_duration(retry_in);
    if (!since_) {
        since_ = last_line_ = now;
        line(level, attempt);
    } else if (now - last_line_ >= summary_every_) {
        last_line_ = now;
        line(level, "still failing after " + elapsed(*since_, now) + " (" +
                        std::to_string(attempts_) + " attempts); last: " + attempt);
    } else {
        line(spdlog::level::debug, attempt);
        return;
    }
    any_error_ = false;
}

void OutageLog::succeeded(TimePoint now) {
    if (!since_) return;
    line(spdlog::level::info, "recovered after " + elapsed(*since_, now) + " (" +
                                  std::to_string(attempts_) + " failed attempts)");
    since_.reset();
    attempts_ = 0;
    any_error_ = false;
}

}  // namespace rowpump
