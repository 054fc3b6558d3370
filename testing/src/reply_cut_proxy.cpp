#include "rowpump/testing/reply_cut_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

namespace rowpump::testing {

namespace {

sockaddr_in loopback(int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    return addr;
}

void write_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
        if (n <= 0) return;  // the peer went away: the read side notices
        data += n;
        size -= static_cast<std::size_t>(n);
    }
}

struct Pair {
    int client;
    int server;
};

}  // namespace

ReplyCutProxy::ReplyCutProxy(int target_port, std::string needle)
    : target_port_(target_port), needle_(std::move(needle)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = loopback(0);
    socklen_t len = sizeof addr;
    if (listen_fd_ < 0 ||
        ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        throw std::runtime_error(std::string("proxy: ") + std::strerror(errno));
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { run(); });
}

ReplyCutProxy::~ReplyCutProxy() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
}

void ReplyCutProxy::arm(std::string needle) {
    std::lock_guard<std::mutex> lock(mutex_);
    needle_ = std::move(needle);
    cut_ = false;
}

void ReplyCutProxy::run() {
    std::vector<Pair> pairs;
    char buffer[65536];
    while (!stop_) {
        std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
        for (const auto& p : pairs) {
            fds.push_back({p.client, POLLIN, 0});
            fds.push_back({p.server, POLLIN, 0});
        }
        if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
        // A pair accepted below has no pollfd in `fds` yet: it is polled from the next round.
        const std::size_t polled = pairs.size();
        if (fds[0].revents & POLLIN) {
            const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
            const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_in target = loopback(target_port_);
            if (client >= 0 && server >= 0 &&
                ::connect(server, reinterpret_cast<sockaddr*>(&target), sizeof target) == 0) {
                pairs.push_back({client, server});
            } else {
                if (client >= 0) ::close(client);
                if (server >= 0) ::close(server);
            }
        }
        std::vector<Pair> open;
        for (std::size_t i = 0; i < pairs.size(); ++i) {
            const Pair p = pairs[i];
            if (i >= polled) {
                open.push_back(p);
                continue;
            }
            bool alive = true;
            for (const bool from_server : {false, true}) {
                const pollfd& f = fds[1 + 2 * i + (from_server ? 1 : 0)];
                if (!alive || !(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
                const ssize_t n = ::recv(f.fd, buffer, sizeof buffer, 0);
                const std::string_view data(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
                std::string needle;
                if (from_server && !cut_) {
                    std::lock_guard<std::mutex> lock(mutex_);
                    needle = needle_;
                }
                if (n <= 0 || (!needle.empty() && data.find(needle) != std::string::npos)) {
                    cut_ = cut_ || n > 0;
                    alive = false;
                } else {
                    write_all(from_server ? p.client : p.server, buffer, data.size());
                }
            }
            if (alive) {
                open.push_back(p);
            } else {
                ::close(p.client);
                ::close(p.server);
            }
        }
        pairs = std::move(open);
    }
    for (const auto& p : pairs) {
        ::close(p.client);
        ::close(p.server);
    }
}

}  // namespace rowpump::testing
