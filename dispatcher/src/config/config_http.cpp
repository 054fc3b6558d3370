#include <limits>

#include "config/config_sections.hpp"

namespace rowpump {

namespace {

// A token shorter than this is guessable; the dashboard's actions change rows.
constexpr std::size_t kMinTokenLength = 16;

bool read_bool(const yaml::Reader& r, const yaml::Item& item) {
    const auto text = r.scalar(item, "true or false");
    if (text == "true") return true;
    if (text == "false") return false;
    r.fail(item, "must be true or false, got '" + text + "'");
}

}  // namespace

bool parse_listen(const std::string& text, std::string& host, int& port) {
    std::string port_text = text;
    host = "127.0.0.1";
    if (const auto colon = text.rfind(':'); colon != std::string::npos) {
        host = text.substr(0, colon);
        port_text = text.substr(colon + 1);
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
            host = host.substr(1, host.size() - 2);
        if (host.empty() || host.find_first_of("[]/ ") != std::string::npos) return false;
    }
    bool out_of_range = false;
    const auto value = yaml::parse_int(port_text, out_of_range);
    if (!value || *value < 1 || *value > 65535) return false;
    port = static_cast<int>(*value);
    return true;
}

HttpConfig read_http(const yaml::Reader& r, const yaml::Item& item) {
    yaml::Map map(r, item, {"listen", "token", "actions"});
    HttpConfig http;
    if (auto v = map.get("listen")) {
        const auto text = r.scalar(*v, "an address like 127.0.0.1:9464");
        if (!parse_listen(text, http.host, http.port))
            r.fail(*v, "must be host:port or a port, like 127.0.0.1:9464, got '" + text + "'");
    }
    if (auto v = map.get("token")) {
        http.token = r.string(*v);
        if (http.token.size() < kMinTokenLength)
            r.fail(*v, "must be at least " + std::to_string(kMinTokenLength) + " characters");
    }
    if (auto v = map.get("actions")) {
        http.actions = read_bool(r, *v);
        if (http.actions && http.token.empty())
            r.fail(*v,
                   "actions need http.token: without one anybody who reaches the port could "
                   "retry, discard and pause");
    }
    return http;
}

DueCountConfig read_due_count(const yaml::Reader& r, const yaml::Item& item) {
    yaml::Map map(r, item, {"interval", "cap", "timeout"});
    DueCountConfig due;
    if (auto v = map.get("interval")) due.interval = r.positive_duration(*v);
    if (auto v = map.get("cap")) due.cap = r.integer(*v, 1, std::numeric_limits<int>::max());
    if (auto v = map.get("timeout")) due.timeout = r.positive_duration(*v);
    return due;
}

}  // namespace rowpump
