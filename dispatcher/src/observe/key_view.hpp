#pragma once

// The per-key figures and limits of a queue with group_by (protocol/key_gauges.hpp) as
// `rowpump status` and the dashboard show them: JSON (text as it is; the JSON encoder escapes
// it) and lines for a terminal (text through log_text, so a key cannot start a line of its own
// or bring terminal escapes).

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>

#include "rowpump/common/protocol/key_gauges.hpp"

namespace rowpump {

// {"top": [{"key", "pushed", "recent", "passed_over", "in_flight"}...], "other": {...},
//  "counted_by", "at_ms"} or null when no leader published any.
nlohmann::json key_gauges_json(const std::optional<protocol::KeyGauges>& gauges);
// {"shown": [{"key", "limits"}...], "total": N}
nlohmann::json key_limits_json(const protocol::KeyLimits& limits);

void print_key_gauges(std::ostream& out, const std::optional<protocol::KeyGauges>& gauges);
void print_key_limits(std::ostream& out, const protocol::KeyLimits& limits);

}  // namespace rowpump
