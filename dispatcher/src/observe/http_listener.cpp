#include "observe/http_listener.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "observe/http_limits.hpp"
#include "observe/request_stream.hpp"

namespace rowpump {

namespace {

using Clock = std::chrono::steady_clock;

int bind_socket(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
        throw std::runtime_error(gai_strerror(rc));
    int error = 0;
    int fd = -1;
    for (auto* a = found; a != nullptr && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            error = errno;
            continue;
        }
        const int yes = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
            error = errno;
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(found);
    if (fd < 0) throw std::runtime_error(std::strerror(error));
    return fd;
}

}  // namespace

HttpListener::HttpListener(HttpServer& server, RefusalLog& refusals)
    : server_(server), refusals_(refusals) {}

void HttpListener::start(const std::string& host, int port) {
    try {
        listen_fd_ = bind_socket(host, port);
    } catch (const std::exception& e) {
        throw std::runtime_error("http: cannot listen on " + host + ":" + std::to_string(port) +
                                 ": " + e.what());
    }
    thread_ = std::thread([this] { accept_loop(); });
}

void HttpListener::accept_loop() {
    while (!stopping_) {
        pollfd p{listen_fd_, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;  // wakes up to see stopping_
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        std::unique_lock<std::mutex> lock(mutex_);
        if (open_.size() >= http_limits::kConnections) {
            lock.unlock();
            RequestStream stream(fd, Clock::now() + std::chrono::seconds(1), refusals_);
            refusals_.refused(stream.remote(), "a connection", 503, "too many open connections");
            stream.answer_and_close(503, "too many open connections, try again\n");
            ::close(fd);
            continue;
        }
        open_.insert(fd);
        std::thread([this, fd] { serve(fd); }).detach();
    }
}

void HttpListener::serve(int fd) {
    {
        RequestStream stream(fd, Clock::now() + http_limits::kRequestDeadline, refusals_);
        bool closed = true;
        server_.process_request(stream, true, closed, nullptr);
    }
    const std::lock_guard<std::mutex> lock(mutex_);  // stop() must not cut a reused number
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    open_.erase(fd);
    idle_.notify_all();
}

void HttpListener::stop() noexcept {
    if (stopping_.exchange(true)) return;
    if (thread_.joinable()) thread_.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    std::unique_lock<std::mutex> lock(mutex_);
    for (const int fd : open_) ::shutdown(fd, SHUT_RDWR);
    idle_.wait(lock, [this] { return open_.empty(); });
}

}  // namespace rowpump
