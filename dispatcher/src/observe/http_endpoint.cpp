#include "observe/http_endpoint.hpp"

#include <spdlog/spdlog.h>

#include "observe/http_listener.hpp"
#include "observe/http_routes.hpp"

namespace rowpump {

struct HttpEndpoint::Impl {
    const Config& config;
    RefusalLog refusals;
    HttpContext context;
    HttpServer server;
    HttpListener listener;

    Impl(const Config& c, const MetricsSet& metrics, Observer& observer)
        : config(c), context{c, metrics, observer, refusals}, listener(server, refusals) {}
};

HttpEndpoint::HttpEndpoint(const Config& config, const MetricsSet& metrics, Observer& observer)
    : impl_(std::make_unique<Impl>(config, metrics, observer)) {
    auto& server = impl_->server;
    add_request_guard(server, impl_->context);
    add_health_routes(server, impl_->context);
    add_dashboard_routes(server, impl_->context);
    add_action_routes(server, impl_->context);
}

HttpEndpoint::~HttpEndpoint() {
    stop();
}

void HttpEndpoint::start() {
    const auto& http = *impl_->config.http;
    impl_->listener.start(http.host, http.port);
    spdlog::info(
        "http: serving /metrics, /healthz, /readyz and the dashboard on http://{}:{}/ "
        "(actions {}, reads {})",
        http.host, http.port, http.actions ? "on" : "off",
        http.read_token ? "with the token" : "open");
}

void HttpEndpoint::stop() noexcept {
    impl_->listener.stop();
}

}  // namespace rowpump
