// What every request passes before its route: the Host it names, the token for reads, and the
// size of its body, checked before the body is read (docs/security.md, "The HTTP port").

#include <arpa/inet.h>
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "observe/http_limits.hpp"
#include "observe/http_routes.hpp"

namespace rowpump {

namespace {

// The host part of a Host header, lower case: "[::1]:9464" -> "::1", "a.b:80" -> "a.b".
std::string host_name(std::string host) {
    if (!host.empty() && host.front() == '[') {
        const auto close = host.find(']');
        host = close == std::string::npos ? host : host.substr(1, close - 1);
    } else if (const auto colon = host.find(':'); colon != std::string::npos) {
        host.resize(colon);
    }
    std::transform(host.begin(), host.end(), host.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return host;
}

bool ip_address(const std::string& host) {
    unsigned char buffer[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
           ::inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// A page from another site that names this port through its own DNS name (DNS rebinding)
// carries that name; an IP address or a configured name cannot be such a page's.
bool host_allowed(const HttpConfig& http, const std::string& header) {
    const auto host = host_name(header);
    if (host.empty()) return false;
    if (ip_address(host) || host == "localhost" || host == host_name(http.host)) return true;
    return std::any_of(http.hosts.begin(), http.hosts.end(),
                       [&](const std::string& h) { return h == "*" || h == host; });
}

// Reads that show no queue data: the page's files and the probes.
bool open_read(const std::string& path) {
    return path == "/" || path == "/index.html" || path == "/dashboard.js" ||
           path == "/dashboard.css" || path == "/healthz" || path == "/readyz";
}

}  // namespace

bool has_token(const HttpContext& context, const httplib::Request& req) {
    const auto& token = context.config.http->token;
    return !token.empty() &&
           constant_time_equal(req.get_header_value("Authorization"), "Bearer " + token);
}

httplib::Server::HandlerResponse refuse(const HttpContext& context, const httplib::Request& req,
                                        httplib::Response& res, int status,
                                        const std::string& why) {
    context.refusals.refused(req.remote_addr, req.method + " " + req.path, status, why);
    res.status = status;
    res.set_header("Connection", "close");
    res.set_content(why + "\n", "text/plain; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
}

void add_request_guard(httplib::Server& server, const HttpContext& context) {
    server.set_default_headers({
        {"X-Content-Type-Options", "nosniff"},
        {"X-Frame-Options", "DENY"},
        {"Content-Security-Policy",
         "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"},
        {"Referrer-Policy", "no-referrer"},
    });
    server.set_pre_routing_handler([&context](const httplib::Request& req, httplib::Response& res) {
        const auto& http = *context.config.http;
        if (!host_allowed(http, req.get_header_value("Host")))
            return refuse(context, req, res, 421,
                          "this endpoint does not serve the host '" +
                              req.get_header_value("Host").substr(0, 100) +
                              "' (add it to http.hosts)");
        if (req.method == "POST" || req.method == "PUT" || req.method == "PATCH" ||
            req.method == "DELETE") {
            if (req.has_header("Transfer-Encoding") || !req.has_header("Content-Length"))
                return refuse(context, req, res, 411, "send the body with a Content-Length");
            char* end = nullptr;
            const auto length = req.get_header_value("Content-Length");
            const auto bytes = std::strtoull(length.c_str(), &end, 10);
            if (length.empty() || *end != '\0' || bytes > http_limits::kBodyBytes)
                return refuse(
                    context, req, res, 413,
                    "a body is at most " + std::to_string(http_limits::kBodyBytes) + " bytes");
        } else if (http.read_token && !open_read(req.path) && !has_token(context, req)) {
            return refuse(context, req, res, 401,
                          "reads need \"Authorization: Bearer <http.token>\" (http.read_token)");
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
}

}  // namespace rowpump
