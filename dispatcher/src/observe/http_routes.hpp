#pragma once

// The routes of the HTTP endpoint, one file per group: health and metrics
// (http_health.cpp), the dashboard's page and JSON (dashboard_routes.cpp) and its actions
// (dashboard_actions.cpp), after the guard every request passes (http_guard.cpp).

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <string>

#include "observe/observer.hpp"
#include "observe/refusal_log.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/observe/queue_metrics.hpp"

namespace rowpump {

struct HttpContext {
    const Config& config;
    const MetricsSet& metrics;
    Observer& observer;
    RefusalLog& refusals;
    mutable std::atomic<std::size_t> actions_running{0};  // at most http_limits::kActions
};

// Host, read token and body size, before any route (http_guard.cpp); security headers on
// every answer.
void add_request_guard(httplib::Server& server, const HttpContext& context);
void add_health_routes(httplib::Server& server, const HttpContext& context);
void add_dashboard_routes(httplib::Server& server, const HttpContext& context);
void add_action_routes(httplib::Server& server, const HttpContext& context);

// Answers `status` with `why`, logs it (rate-limited) and closes the connection.
httplib::Server::HandlerResponse refuse(const HttpContext& context, const httplib::Request& req,
                                        httplib::Response& res, int status, const std::string& why);
// The request carries "Authorization: Bearer <http.token>".
bool has_token(const HttpContext& context, const httplib::Request& req);

// Equal without taking longer for a longer common prefix (for tokens).
bool constant_time_equal(const std::string& a, const std::string& b) noexcept;

}  // namespace rowpump
