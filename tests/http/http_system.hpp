#pragma once

// What the HTTP tests start from: servers, the end-to-end table with `rows` due rows, a
// config with `http` on a free port (actions on, with kToken), migrated; the dispatcher
// starts when the test says so.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/http_client.hpp"
#include "rowpump/testing/queue_redis.hpp"

namespace rowpump::testing {

struct HttpSystem {
    static constexpr const char* kToken = "test-token-0123456789";

    HttpSystem(QueueSpec queue, std::int64_t rows, std::vector<std::string> extra_lines = {},
               bool actions = true);

    // Starts `rowpump run` and waits until /readyz answers 200.
    void start();
    Samples metrics();
    double metric(const std::string& name);  // of the queue: name{queue="users"}
    HttpResult get(const std::string& path) { return http_get(port, path); }
    HttpResult post(const std::string& path, const std::string& body,
                    const std::string& token = kToken) {
        return http_post(port, path, body, token);
    }
    protocol::Keys keys() const { return protocol::keys_for(queue.name); }

    TestBed bed;
    QueueSpec queue;
    MysqlClient db;
    redis::Connection redis;
    int port;
    std::string config;
    std::unique_ptr<Dispatcher> dispatcher;
};

// e2e_queue() with due_since (the oldest due age) set to updated_time.
QueueSpec queue_with_latency();
// Config lines that make the leader count the due rows every 200 ms.
std::vector<std::string> fast_due_count();

// Pops up to `n` ready messages.
std::vector<std::string> pop_ready(redis::Connection& redis, const std::string& queue,
                                   std::int64_t n);
// Pushes done messages as a worker would.
void push_done(redis::Connection& redis, const std::string& queue,
               const std::vector<std::string>& messages);
bool contains(const std::string& text, const std::string& part);

}  // namespace rowpump::testing
