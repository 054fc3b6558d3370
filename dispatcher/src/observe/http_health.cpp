// GET /metrics, /healthz and /readyz.

#include <chrono>

#include "observe/http_routes.hpp"
#include "rowpump/common/protocol/queue_gauges.hpp"
#include "rowpump/dispatcher/observe/metrics_text.hpp"

namespace rowpump {

namespace {

// What makes a queue not ready, or "" when it is ready: connected to both servers, and
// either leading or standing by.
std::string not_ready(const QueueMetrics& q) {
    if (!q.connected(Gauge::mysql_connected)) return "not connected to MySQL";
    if (!q.connected(Gauge::redis_connected)) return "not connected to Redis";
    return "";
}

}  // namespace

void add_health_routes(httplib::Server& server, const HttpContext& context) {
    server.Get("/metrics", [&context](const httplib::Request&, httplib::Response& res) {
        res.set_content(render_metrics(context.metrics, ROWPUMP_VERSION),
                        "text/plain; version=0.0.4; charset=utf-8");
    });
    server.Get("/healthz", [&context](const httplib::Request&, httplib::Response& res) {
        const auto now = std::chrono::steady_clock::now();
        std::string body;
        for (const auto& q : context.metrics) {
            if (q->stuck(now)) body += "queue " + q->queue() + ": loop stuck\n";
        }
        res.status = body.empty() ? 200 : 503;
        res.set_content(body.empty() ? "ok\n" : body, "text/plain; charset=utf-8");
    });
    server.Get("/readyz", [&context](const httplib::Request&, httplib::Response& res) {
        std::string body, problems;
        for (const auto& q : context.metrics) {
            const auto problem = not_ready(*q);
            body +=
                "queue " + q->queue() + ": " +
                (problem.empty() ? (q->leader() ? protocol::kRoleLeader : protocol::kRoleStandby)
                                 : problem) +
                "\n";
            problems += problem;
        }
        res.status = problems.empty() ? 200 : 503;
        res.set_content(body, "text/plain; charset=utf-8");
    });
}

}  // namespace rowpump
