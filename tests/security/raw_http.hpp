#pragma once

// HTTP at the byte level, for requests no well-behaved client sends: a raw connection to the
// dispatcher's port, and one request written whole with its answer read back.

#include <chrono>
#include <string>

namespace rowpump::testing {

class RawConnection {
public:
    explicit RawConnection(int port);
    ~RawConnection();
    RawConnection(const RawConnection&) = delete;
    RawConnection& operator=(const RawConnection&) = delete;

    // False once the peer has closed the connection (or the write failed).
    bool send(const std::string& bytes);
    // What arrives until the peer closes or `timeout` passes.
    std::string read_all(std::chrono::milliseconds timeout);
    // True when the peer closed the connection within `timeout` (what it sent is dropped).
    bool closed_within(std::chrono::milliseconds timeout);

private:
    int fd_;
};

// `request` sent whole on a fresh connection; the answer, "" if none came in 10 s.
std::string raw_request(int port, const std::string& request);
// The status of an answer ("HTTP/1.1 413 ..." -> 413), 0 if there is none.
int status_of(const std::string& answer);
// A GET of `path` with the given Host header.
std::string get_with_host(int port, const std::string& path, const std::string& host,
                          const std::string& extra_headers = "");

}  // namespace rowpump::testing
