#pragma once

// The Prometheus text exposition format (version 0.0.4) of every queue's metrics, as
// GET /metrics serves it. docs/operations.md ("Metrics") lists the names.

#include <string>
#include <string_view>

#include "rowpump/dispatcher/observe/queue_metrics.hpp"

namespace rowpump {

std::string render_metrics(const MetricsSet& queues, const std::string& version);

// A label's value as the format wants it: backslash, double quote and newline escaped (\\, \",
// \n), and every byte that is not well-formed UTF-8 replaced by U+FFFD.
std::string label_value(std::string_view text);

// The `key` label of a per-key series: the key's text, "(null)" for NULL.
inline constexpr const char* kOtherKeysLabel = "(other)";
inline constexpr const char* kNullKeyLabel = "(null)";

}  // namespace rowpump
