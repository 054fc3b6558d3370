#pragma once

// UTF-8 as MySQL's utf8mb4 accepts it: no overlong forms, no surrogates, nothing past
// U+10FFFF. Text from workers (reasons, ids) is checked with this before it reaches a column
// or a log line.

#include <cstddef>
#include <string>
#include <string_view>

namespace rowpump {

// Length in bytes of the well-formed UTF-8 sequence starting at text[i], or 0 when the bytes
// there are not one (a stray continuation byte, a cut or overlong sequence, ...).
// Precondition: i < text.size().
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

// `text` with every byte that does not belong to a well-formed sequence replaced by U+FFFD
// (the replacement character), so that a utf8mb4 column takes it.
std::string valid_utf8(std::string_view text);

}  // namespace rowpump
