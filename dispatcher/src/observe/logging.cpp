#include "rowpump/dispatcher/observe/logging.hpp"

#include <spdlog/details/os.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>

#include "rowpump/common/duration.hpp"

namespace rowpump {

namespace {

// syslog(3) priorities: what journald files each line under.
int syslog_priority(spdlog::level::level_enum level) {
    switch (level) {
        case spdlog::level::critical:
            return 2;
        case spdlog::level::err:
            return 3;
        case spdlog::level::warn:
            return 4;
        case spdlog::level::info:
            return 6;
        default:
            return 7;
    }
}

class JournalFormatter : public spdlog::formatter {
public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
        const std::string prefix = "<" + std::to_string(syslog_priority(msg.level)) + ">";
        dest.append(prefix.data(), prefix.data() + prefix.size());
        dest.append(msg.payload.begin(), msg.payload.end());
        dest.push_back('\n');
    }
    std::unique_ptr<spdlog::formatter> clone() const override {
        return std::make_unique<JournalFormatter>();
    }
};

class JsonFormatter : public spdlog::formatter {
public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
        std::string event(msg.payload.data(), msg.payload.size());
        nlohmann::json queue = nullptr;
        // Lines about a queue start "queue <name>: "; the name goes into its own field.
        if (event.rfind("queue ", 0) == 0) {
            if (const auto colon = event.find(": ", 6); colon != std::string::npos) {
                queue = event.substr(6, colon - 6);
                event = event.substr(colon + 2);
            }
        }
        const auto level = spdlog::level::to_string_view(msg.level);
        const nlohmann::ordered_json line = {{"time", iso_time(msg.time)},
                                             {"level", std::string(level.data(), level.size())},
                                             {"queue", queue},
                                             {"event", event},
                                             {"fields", {{"thread", msg.thread_id}}}};
        const auto text =
            line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
        dest.append(text.data(), text.data() + text.size());
        dest.push_back('\n');
    }
    std::unique_ptr<spdlog::formatter> clone() const override {
        return std::make_unique<JsonFormatter>();
    }

private:
    static std::string iso_time(spdlog::log_clock::time_point t) {
        const auto seconds = spdlog::log_clock::to_time_t(t);
        const auto ms = std::chrono::duration_cast<Millis>(t.time_since_epoch()).count() % 1000;
        std::tm utc{};
        gmtime_r(&seconds, &utc);
        char text[96];
        std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                      utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                      static_cast<int>(ms));
        return text;
    }
};

}  // namespace

bool stderr_is_journal() {
    const char* stream = std::getenv("JOURNAL_STREAM");
    struct stat st {};
    if (stream == nullptr || fstat(STDERR_FILENO, &st) != 0) return false;
    unsigned long long device = 0, inode = 0;
    if (std::sscanf(stream, "%llu:%llu", &device, &inode) != 2) return false;
    return device == static_cast<unsigned long long>(st.st_dev) &&
           inode == static_cast<unsigned long long>(st.st_ino);
}

void setup_logging(const std::string& level, const std::string& format) {
    auto logger = spdlog::stderr_logger_mt("rowpump");
    if (format == "json") {
        logger->set_formatter(std::make_unique<JsonFormatter>());
    } else if (stderr_is_journal()) {
        logger->set_formatter(std::make_unique<JournalFormatter>());
    } else {
        logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %l %v");
    }
    logger->set_level(spdlog::level::from_str(level));
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);
}

}  // namespace rowpump
