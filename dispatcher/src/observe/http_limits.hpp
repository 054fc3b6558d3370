#pragma once

// What the HTTP endpoint accepts from a client before it answers or drops it (docs/security.md,
// "The HTTP port"). The endpoint serves a few small GETs and tiny JSON POSTs, so each bound is
// far above any honest request and far below what could hurt the process.

#include <chrono>
#include <cstddef>

namespace rowpump::http_limits {

// The request line ("GET /path?query HTTP/1.1"); longer: 414.
constexpr std::size_t kRequestLineBytes = 8 * 1024;
// The request line and all header lines together, and how many header lines; more: 431.
constexpr std::size_t kHeadBytes = 16 * 1024;
constexpr std::size_t kHeaderLines = 64;
// A POST body (given with Content-Length; chunked or unsized bodies get 411); longer: 413.
constexpr std::size_t kBodyBytes = 64 * 1024;
// From the connection's accept to the last byte of the request: a client that sends slower is
// dropped, so a slow client holds a connection this long at most.
constexpr std::chrono::seconds kRequestDeadline{10};
// Writing the answer, per write.
constexpr std::chrono::seconds kWriteTimeout{5};
// Connections served at once, each on a thread of its own; beyond it new ones get 503 at once.
// Health probes need a free one: slow clients hold theirs for kRequestDeadline at most.
constexpr std::size_t kConnections = 64;
// Dashboard actions run at once (each opens a server connection); beyond it: 503.
constexpr std::size_t kActions = 2;

}  // namespace rowpump::http_limits
