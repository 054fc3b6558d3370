#pragma once

// The HTTP endpoint's socket: accepts connections and serves each on a thread of its own, at
// most http_limits::kConnections at once (more get 503 and are closed), one request per
// connection, read through a RequestStream. So a slow or large request holds one thread until
// its deadline and never keeps /healthz from being answered, unlike a fixed pool that slow
// clients can fill.

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "observe/refusal_log.hpp"

namespace rowpump {

// cpp-httplib's server with its request handling open to the listener, which drives it one
// request at a time over a RequestStream.
class HttpServer : public httplib::Server {
public:
    using httplib::Server::process_request;
};

class HttpListener {
public:
    HttpListener(HttpServer& server, RefusalLog& refusals);
    ~HttpListener() { stop(); }
    HttpListener(const HttpListener&) = delete;
    HttpListener& operator=(const HttpListener&) = delete;

    // Binds host:port (throws std::runtime_error naming the address when it cannot) and
    // serves in the background.
    void start(const std::string& host, int port);
    // Stops accepting, cuts the open connections and waits for their threads.
    void stop() noexcept;

private:
    void accept_loop();
    void serve(int fd);

    HttpServer& server_;
    RefusalLog& refusals_;
    int listen_fd_ = -1;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable idle_;
    std::set<int> open_;  // the connections being served
};

}  // namespace rowpump
