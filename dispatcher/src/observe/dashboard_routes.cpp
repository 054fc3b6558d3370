// The dashboard: its page (GET /, /dashboard.js, /dashboard.css) and the JSON it polls
// (GET /api/state), built from the observer's copies and this process's metrics.

#include <nlohmann/json.hpp>

#include <cstdlib>

#include "observe/dashboard_assets.hpp"
#include "observe/http_routes.hpp"
#include "observe/key_view.hpp"
#include "observe/worker_list.hpp"
#include "rowpump/common/protocol/queue_stats.hpp"

namespace rowpump {

namespace {

using nlohmann::json;

json history_json(const QueueView& view, std::int64_t since_ms) {
    json points = json::array();
    for (const auto& s : view.history) {
        if (s.at_ms <= since_ms) continue;
        points.push_back({s.at_ms, s.dispatched, s.completed, s.due, s.ready, s.in_flight});
    }
    return points;
}

json dead_json(const QueueView& view) {
    json rows = json::array();
    for (const auto& d : view.dead) {
        rows.push_back({{"shard", d.shard},
                        {"id", d.id},
                        {"attempts", d.attempts},
                        {"error", d.error},
                        {"dead_at", d.dead_at}});
    }
    return rows;
}

json dispatchers_json(const QueueView& view) {
    json list = json::array();
    for (const auto& d : view.dispatchers)
        list.push_back({{"id", d.id}, {"role", d.role}, {"seen_ms", d.at_ms}});
    return list;
}

json queue_json(const QueueView& view, const QueueMetrics& metrics, std::int64_t since_ms) {
    json stats = json::object();
    for (const auto& [name, value] : view.redis.stats) stats[name] = value;
    json q = {{"name", view.name},
              {"paused", view.paused_by.has_value()},
              {"paused_by", view.paused_by ? json(*view.paused_by) : json(nullptr)},
              {"ready", view.redis.ready},
              {"in_flight", view.redis.in_flight},
              {"workers", view.redis.workers},
              {"live_workers", view.redis.live_workers},
              {"worker_list", worker_list_json(view.redis)},
              {"stats", stats},
              {"leader_here", metrics.leader()},
              {"dispatchers", dispatchers_json(view)},
              {"dead", dead_json(view)},
              {"history", history_json(view, since_ms)},
              {"observed_ms", view.observed_at_ms},
              {"problem", view.problem},
              {"keys", key_gauges_json(view.key_gauges)},
              {"key_limits", key_limits_json(view.key_limits)}};
    q["due"] = view.gauges ? json(view.gauges->due) : json(nullptr);
    q["due_capped"] = view.gauges && view.gauges->due_capped;
    q["oldest_due_age_seconds"] =
        view.gauges && view.gauges->oldest_due_age
            ? json(static_cast<double>(view.gauges->oldest_due_age->count()) / 1000.0)
            : json(nullptr);
    return q;
}

}  // namespace

void add_dashboard_routes(httplib::Server& server, const HttpContext& context) {
    for (const auto& asset : dashboard_assets()) {
        auto serve = [&asset](const httplib::Request&, httplib::Response& res) {
            res.set_content(asset.body.data(), asset.body.size(), asset.content_type);
            res.set_header("Cache-Control", "no-cache");
        };
        server.Get(asset.path, serve);
        if (std::string(asset.path) == "/index.html") server.Get("/", serve);
    }
    server.Get("/api/state", [&context](const httplib::Request& req, httplib::Response& res) {
        const std::int64_t since =
            req.has_param("since") ? std::atoll(req.get_param_value("since").c_str()) : 0;
        const auto views = context.observer.views();
        json queues = json::array();
        for (std::size_t i = 0; i < views.size(); ++i)
            queues.push_back(queue_json(views[i], *context.metrics[i], since));
        const json state = {{"version", ROWPUMP_VERSION},
                            {"actions", context.config.http->actions},
                            {"queues", queues}};
        res.set_content(state.dump(-1, ' ', false, json::error_handler_t::replace),
                        "application/json");
        res.set_header("Cache-Control", "no-store");
    });
}

}  // namespace rowpump
