#pragma once

// The routes of the HTTP endpoint, one file per group: health and metrics
// (http_health.cpp), the dashboard's page and JSON (dashboard_routes.cpp) and its actions
// (dashboard_actions.cpp).

#include <httplib.h>

#include "observe/observer.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/observe/queue_metrics.hpp"

namespace rowpump {

struct HttpContext {
    const Config& config;
    const MetricsSet& metrics;
    Observer& observer;
};

void add_health_routes(httplib::Server& server, const HttpContext& context);
void add_dashboard_routes(httplib::Server& server, const HttpContext& context);
void add_action_routes(httplib::Server& server, const HttpContext& context);

// Equal without taking longer for a longer common prefix (for tokens).
bool constant_time_equal(const std::string& a, const std::string& b) noexcept;

}  // namespace rowpump
