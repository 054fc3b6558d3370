#pragma once

// The Prometheus text exposition format (version 0.0.4) of every queue's metrics, as
// GET /metrics serves it. docs/operations.md ("Metrics") lists the names.

#include <string>

#include "rowpump/dispatcher/observe/queue_metrics.hpp"

namespace rowpump {

std::string render_metrics(const MetricsSet& queues, const std::string& version);

}  // namespace rowpump
