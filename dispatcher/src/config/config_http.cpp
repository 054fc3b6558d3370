#include <algorithm>
#include <cctype>
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

bool loopback_host(const std::string& host) {
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

HttpConfig read_http(const yaml::Reader& r, const yaml::Item& item) {
    yaml::Map map(r, item, {"listen", "token", "actions", "read_token", "hosts"});
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
    http.read_token = !loopback_host(http.host);
    if (auto v = map.get("read_token")) {
        http.read_token = read_bool(r, *v);
        if (http.read_token && http.token.empty())
            r.fail(*v, "read_token needs http.token: the token is what reads must present");
    }
    if (!loopback_host(http.host) && http.token.empty()) {
        r.fail(map.get("listen") ? *map.get("listen") : item,
               "listening on " + http.host +
                   " (beyond loopback) needs http.token: without one anybody who reaches the "
                   "port reads the queues' dead rows and errors");
    }
    if (auto v = map.get("hosts")) {
        if (!v->node.IsSequence())
            r.fail(*v, "must be a list of host names, got " + yaml::describe(v->node));
        for (std::size_t i = 0; i < v->node.size(); ++i) {
            const yaml::Item element{v->node[i], v->key + "[" + std::to_string(i) + "]"};
            auto name = r.nonempty_string(element);
            if (name.find_first_of(" /:[]") != std::string::npos)
                r.fail(element,
                       "must be a host name without port, like dispatcher.internal, got '" + name +
                           "'");
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            http.hosts.push_back(std::move(name));
        }
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
