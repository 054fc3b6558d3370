#pragma once

// The summary: medians of the repetitions as markdown tables, ratios and targets.

#include <string>
#include <vector>

#include "driver/context.hpp"

namespace rowpump::bench {

struct Targets {
    double dispatch_ratio = 0.75;  // rowpump / bare loop at batch 1000
    double e2e_tasks_per_s = 20000;
    double e2e_over_baseline = 20;
    double scale_rate = 0.80;  // rows/s on the largest table / on the smallest
    double scale_rss = 1.25;   // the dispatcher's peak RSS, largest / smallest: flat
};

std::string markdown_summary(const std::vector<Sample>& samples, const Targets& targets);

}  // namespace rowpump::bench
