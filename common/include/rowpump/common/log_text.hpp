#pragma once

// Text that came from outside (a message from Redis, a task id, a worker id, a reason) as it
// may appear inside a log line: it can neither start a line of its own nor bring terminal
// escapes or binary bytes into the log, and a huge message costs one short line.

#include <cstddef>
#include <string>
#include <string_view>

namespace rowpump {

constexpr std::size_t kLogTextBytes = 200;

// `text` escaped: backslash as \\, newline, carriage return and tab as \n \r \t, every other
// control character (C0, DEL, C1) and every byte that is not well-formed UTF-8 as \xNN.
// When the escaped text is longer than `max_bytes` it is cut there (never inside an escape
// or a UTF-8 sequence) and "... (N bytes)" follows, N being the length of `text`.
std::string log_text(std::string_view text, std::size_t max_bytes = kLogTextBytes);

}  // namespace rowpump
