#include "http_system.hpp"

#include <stdexcept>

#include "rowpump/testing/eventually.hpp"

namespace rowpump::testing {

HttpSystem::HttpSystem(QueueSpec q, std::int64_t rows, std::vector<std::string> extra_lines,
                       bool actions)
    : queue(std::move(q)), db(bed.db()), redis(bed.redis_client()), port(free_port()) {
    create_e2e_table(db);
    insert_e2e_rows(db, 1, rows);
    ConfigSpec spec = bed.config_spec({queue});
    spec.extra_lines = {"http:", "  listen: \"127.0.0.1:" + std::to_string(port) + "\"",
                        std::string("  token: ") + kToken,
                        std::string("  actions: ") + (actions ? "true" : "false")};
    spec.extra_lines.insert(spec.extra_lines.end(), extra_lines.begin(), extra_lines.end());
    config = write_config(bed.dir.file("rowpump.yaml"), spec);
    migrate_apply(config);
}

void HttpSystem::start() {
    dispatcher = bed.start_dispatcher(config);
    if (!eventually(15s, [&] { return get("/readyz").status == 200; }))
        throw std::runtime_error("/readyz never answered 200:\n" + dispatcher->log_tail());
}

Samples HttpSystem::metrics() {
    const auto r = get("/metrics");
    if (r.status != 200) throw std::runtime_error("/metrics: " + std::to_string(r.status));
    return parse_prometheus(r.body);
}

double HttpSystem::metric(const std::string& name) {
    return sample(metrics(), name + "{queue=\"" + queue.name + "\"}");
}

QueueSpec queue_with_latency() {
    QueueSpec queue = e2e_queue();
    queue.extra_lines = {"due_since: \"updated_time\""};
    return queue;
}

std::vector<std::string> fast_due_count() {
    return {"due_count: { interval: 200ms }"};
}

std::vector<std::string> pop_ready(redis::Connection& redis, const std::string& queue,
                                   std::int64_t n) {
    return redis.command({"LPOP", protocol::keys_for(queue).ready, std::to_string(n)}).strings();
}

void push_done(redis::Connection& redis, const std::string& queue,
               const std::vector<std::string>& messages) {
    std::vector<std::string> args{"RPUSH", protocol::keys_for(queue).done};
    args.insert(args.end(), messages.begin(), messages.end());
    redis.command(args);
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace rowpump::testing
