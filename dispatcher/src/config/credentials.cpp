#include "config/credentials.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace rowpump {

namespace {

std::optional<std::string> read_credential(const std::string& name) {
    const char* directory = std::getenv("CREDENTIALS_DIRECTORY");
    if (directory == nullptr || *directory == '\0') return std::nullopt;
    std::ifstream file(std::string(directory) + "/" + name, std::ios::binary);
    if (!file) return std::nullopt;
    std::ostringstream text;
    text << file.rdbuf();
    std::string value = text.str();
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
    return value;
}

}  // namespace

std::optional<std::string> lookup_variable(const std::string& name) {
    if (auto credential = read_credential(name)) return credential;
    if (const char* value = std::getenv(name.c_str())) return std::string(value);
    return std::nullopt;
}

}  // namespace rowpump
