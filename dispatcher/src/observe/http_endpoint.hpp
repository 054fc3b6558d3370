#pragma once

// The dispatcher's HTTP endpoint (config `http`): GET /metrics, /healthz, /readyz, the
// dashboard at / with its JSON API, and the dashboard's actions (POST, with http.token).
// Served by threads of its own (http_listener.hpp, bounded by http_limits.hpp); handlers read
// atomics and the observer's copies, so no request ever waits for a dispatch loop or runs an
// expensive query.

#include <memory>

#include "observe/observer.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/observe/queue_metrics.hpp"

namespace rowpump {

class HttpEndpoint {
public:
    HttpEndpoint(const Config& config, const MetricsSet& metrics, Observer& observer);
    ~HttpEndpoint();
    HttpEndpoint(const HttpEndpoint&) = delete;
    HttpEndpoint& operator=(const HttpEndpoint&) = delete;

    // Binds http.listen (throws std::runtime_error naming the address when it cannot) and
    // serves in the background.
    void start();
    void stop() noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace rowpump
