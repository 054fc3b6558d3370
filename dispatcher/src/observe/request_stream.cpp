#include "observe/request_stream.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "observe/http_limits.hpp"

namespace rowpump {

namespace {

using Clock = std::chrono::steady_clock;
using namespace http_limits;

int millis_until(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, left.count()));
}

bool wait_for(int fd, short events, int timeout_ms) {
    pollfd p{fd, events, 0};
    for (;;) {
        const int n = ::poll(&p, 1, timeout_ms);
        if (n < 0 && errno == EINTR) continue;
        return n > 0;
    }
}

void address_of(const sockaddr_storage& addr, std::string& ip, int& port) {
    char text[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
        const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
        ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
        port = ntohs(a.sin_port);
    } else if (addr.ss_family == AF_INET6) {
        const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
        ::inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
        port = ntohs(a.sin6_port);
    }
    ip = text;
}

const char* reason(int status) {
    switch (status) {
        case 414:
            return "URI Too Long";
        case 431:
            return "Request Header Fields Too Large";
        case 503:
            return "Service Unavailable";
        default:
            return "Bad Request";
    }
}

}  // namespace

RequestStream::RequestStream(int fd, Clock::time_point deadline, RefusalLog& refusals)
    : fd_(fd), deadline_(deadline), refusals_(refusals) {}

bool RequestStream::wait_readable() const {
    return wait_for(fd_, POLLIN, millis_until(deadline_));
}

bool RequestStream::is_readable() const {
    return !closed_ && (begin_ < end_ || wait_readable());
}

bool RequestStream::is_writable() const {
    return !closed_ && wait_for(fd_, POLLOUT, static_cast<int>(kWriteTimeout.count() * 1000));
}

ssize_t RequestStream::read(char* ptr, std::size_t size) {
    if (closed_) return -1;
    if (begin_ == end_) {
        if (!wait_readable()) return -1;  // the deadline passed
        const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
        if (n <= 0) return n;
        begin_ = 0;
        end_ = static_cast<std::size_t>(n);
    }
    const std::size_t n = std::min(size, end_ - begin_);
    if (!account(buffer_.data() + begin_, n)) return -1;
    std::copy_n(buffer_.data() + begin_, n, ptr);
    begin_ += n;
    return static_cast<ssize_t>(n);
}

bool RequestStream::account(const char* bytes, std::size_t n) {
    if (!in_head_) {
        body_bytes_ += n;
        return body_bytes_ <= kBodyBytes;  // a backstop: the guard refuses larger lengths first
    }
    std::size_t i = 0;
    while (i < n && in_head_) {
        const char c = bytes[i++];
        ++head_bytes_;
        if (lines_ == 0 && request_line_.size() < 200) request_line_ += c;
        if (c == '\n') {
            in_head_ = !(lines_ > 0 && line_bytes_ == 0);  // an empty line ends the head
            ++lines_;
            line_bytes_ = 0;
        } else if (c != '\r') {
            ++line_bytes_;
        }
        if (!in_head_) break;
        if (lines_ == 0 && line_bytes_ > kRequestLineBytes) {
            refusals_.refused(remote(), request_line_, 414, "request line over the limit");
            answer_and_close(414, "the request line is longer than " +
                                      std::to_string(kRequestLineBytes) + " bytes\n");
            return false;
        }
        if (head_bytes_ > kHeadBytes || lines_ > kHeaderLines + 1) {
            refusals_.refused(remote(), request_line_, 431, "headers over the limit");
            answer_and_close(431, "at most " + std::to_string(kHeaderLines) + " header lines and " +
                                      std::to_string(kHeadBytes) + " bytes of headers\n");
            return false;
        }
    }
    body_bytes_ += n - i;
    return body_bytes_ <= kBodyBytes;
}

std::string RequestStream::remote() const {
    std::string ip;
    int port = 0;
    get_remote_ip_and_port(ip, port);
    return ip;
}

ssize_t RequestStream::write(const char* ptr, std::size_t size) {
    if (closed_ || !is_writable()) return -1;
    return ::send(fd_, ptr, size, MSG_NOSIGNAL);
}

void RequestStream::answer_and_close(int status, const std::string& body) {
    const std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) +
                             "\r\nContent-Type: text/plain; charset=utf-8"
                             "\r\nX-Content-Type-Options: nosniff"
                             "\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    for (std::size_t sent = 0; sent < text.size();) {
        const ssize_t n = write(text.data() + sent, text.size() - sent);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
    }
    closed_ = true;
}

void RequestStream::get_remote_ip_and_port(std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        address_of(addr, ip, port);
}

void RequestStream::get_local_ip_and_port(std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        address_of(addr, ip, port);
}

}  // namespace rowpump
