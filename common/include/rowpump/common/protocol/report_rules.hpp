#pragma once

// What a done message may carry, checked the same way by the worker SDK before it reports
// and by the dispatcher before it applies.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "rowpump/common/protocol/messages.hpp"
#include "rowpump/common/utf8.hpp"

namespace rowpump::protocol {

// "" if the values of `done` fit the queue's on_success placeholders `declared` exactly
// (an ok needs every one of them; no verb may name another), else what is wrong:
// "undeclared value 'x' (queue declares: status)".
std::string value_problem(const Done& done, const std::vector<std::string>& declared);

// The delay a retry asked for, cut to `max_delay` (the queue's retry.max_delay): a worker
// must not park a row for a century, out of sight of `rowpump dead`.
inline Millis capped_delay(Millis requested, Millis max_delay) {
    return requested < max_delay ? requested : max_delay;
}

// rp_last_error is a utf8mb4 column of 1024 characters (`rowpump check` makes sure): a reason
// is cut to this many bytes, which are at most as many characters.
constexpr std::size_t kMaxReasonBytes = 1000;

// `text` if it fits in `max_bytes`, else its start ending in "..." within `max_bytes`, never
// cutting a UTF-8 sequence in half.
std::string clip_utf8(std::string_view text, std::size_t max_bytes);
// A reason as it is stored: invalid UTF-8 replaced (MySQL would refuse the whole outcome
// with error 1366), then clipped to the column.
inline std::string clip_reason(std::string_view reason) {
    return clip_utf8(valid_utf8(reason), kMaxReasonBytes);
}

}  // namespace rowpump::protocol
