#include "observe/http_endpoint.hpp"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "observe/http_routes.hpp"

namespace rowpump {

namespace {

constexpr std::size_t kThreads = 4;  // scrapes, the dashboard and an action at the same time

}  // namespace

struct HttpEndpoint::Impl {
    const Config& config;
    HttpContext context;
    httplib::Server server;
    std::thread thread;
};

HttpEndpoint::HttpEndpoint(const Config& config, const MetricsSet& metrics, Observer& observer)
    : impl_(new Impl{config, HttpContext{config, metrics, observer}, {}, {}}) {
    auto& server = impl_->server;
    server.new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
    add_health_routes(server, impl_->context);
    add_dashboard_routes(server, impl_->context);
    add_action_routes(server, impl_->context);
}

HttpEndpoint::~HttpEndpoint() {
    stop();
}

void HttpEndpoint::start() {
    const auto& http = *impl_->config.http;
    if (!impl_->server.bind_to_port(http.host.c_str(), http.port)) {
        const int error = errno;
        throw std::runtime_error("http: cannot listen on " + http.host + ":" +
                                 std::to_string(http.port) + ": " + std::strerror(error));
    }
    impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
    spdlog::info(
        "http: serving /metrics, /healthz, /readyz and the dashboard on http://{}:{}/ "
        "(actions {})",
        http.host, http.port, http.actions ? "on" : "off");
}

void HttpEndpoint::stop() noexcept {
    impl_->server.stop();
    if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace rowpump
