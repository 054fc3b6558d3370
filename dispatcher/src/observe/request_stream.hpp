#pragma once

// One accepted connection as cpp-httplib reads it, with the bounds of http_limits.hpp applied
// to the bytes before cpp-httplib sees them: the request line, the head and the body are
// counted as they arrive, and every read waits only until the request's deadline. A request
// over a bound is answered here (414 or 431) and the connection then reads and writes nothing
// more; one past the deadline is dropped.

#include <httplib.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <string>

#include "observe/refusal_log.hpp"

namespace rowpump {

class RequestStream : public httplib::Stream {
public:
    RequestStream(int fd, std::chrono::steady_clock::time_point deadline, RefusalLog& refusals);

    bool is_readable() const override;
    bool is_writable() const override;
    ssize_t read(char* ptr, std::size_t size) override;
    ssize_t write(const char* ptr, std::size_t size) override;
    void get_remote_ip_and_port(std::string& ip, int& port) const override;
    void get_local_ip_and_port(std::string& ip, int& port) const override;
    socket_t socket() const override { return fd_; }

    // Answers `status` with `body` as plain text and closes the exchange (used for refusals
    // before cpp-httplib has a request, and by the listener for 503).
    void answer_and_close(int status, const std::string& body);
    std::string remote() const;  // the client's address

private:
    // Counts `n` bytes handed on; false (and answered) when one crosses a bound.
    bool account(const char* bytes, std::size_t n);
    bool wait_readable() const;

    int fd_;
    std::chrono::steady_clock::time_point deadline_;
    RefusalLog& refusals_;
    std::array<char, 4096> buffer_{};
    std::size_t begin_ = 0, end_ = 0;
    bool closed_ = false;
    bool in_head_ = true;
    std::size_t head_bytes_ = 0, line_bytes_ = 0, lines_ = 0, body_bytes_ = 0;
    std::string request_line_;  // what is read of it, for the log
};

}  // namespace rowpump
