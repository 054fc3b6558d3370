#pragma once

#include <stdexcept>
#include <string>

#include "rowpump/common/duration.hpp"

namespace rowpump {

// One problem in a config file. what() reads "FILE:LINE: KEY: problem", e.g.
// "rowpump.yaml:12: queues.users.batch: must be a positive integer, got -5".
class ConfigError : public std::runtime_error {
public:
    ConfigError(std::string file, int line, std::string key, std::string problem);
    const std::string& file() const { return file_; }
    int line() const { return line_; }  // 1-based; 0 when the file could not be read
    const std::string& key() const { return key_; }
    const std::string& problem() const { return problem_; }

private:
    std::string file_;
    int line_;
    std::string key_;
    std::string problem_;
};

// Every duration in a config is at most this: NOW(3) plus a lease or a backoff stays far inside
// what DATETIME holds (year 9999), and no microsecond count, sleep or Redis expiry overflows.
// A longer one is a ConfigError.
constexpr Millis kMaxDuration{8760LL * 60 * 60 * 1000};  // 8760h, 365 days

}  // namespace rowpump
