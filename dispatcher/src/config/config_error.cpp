#include "rowpump/dispatcher/config/config_error.hpp"

namespace rowpump {

namespace {

std::string compose_message(const std::string& file, int line, const std::string& key,
                            const std::string& problem) {
    std::string out = file + ":" + std::to_string(line) + ": ";
    if (!key.empty()) out += key + ": ";
    return out + problem;
}

}  // namespace

ConfigError::ConfigError(std::string file, int line, std::string key, std::string problem)
    : std::runtime_error(compose_message(file, line, key, problem)),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)),
      problem_(std::move(problem)) {}

}  // namespace rowpump
