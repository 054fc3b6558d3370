#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace rowpump {

using Millis = std::chrono::milliseconds;

// Parses "250ms", "10s", "5m", "1h" and sums of them ("1m30s"). Returns nullopt on anything
// else: no unit, unknown unit, sign, fraction, overflow. Zero ("0s") parses; callers decide
// whether zero makes sense.
std::optional<Millis> parse_duration(std::string_view text);

// The shortest exact spelling: 1500ms, 3s, 5m, 2h.
std::string format_duration(Millis d);

}  // namespace rowpump
