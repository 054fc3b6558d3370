#include <catch2/catch.hpp>

#include <string>

#include "rowpump/dispatcher/loop/claim.hpp"
#include "rowpump/dispatcher/observe/metrics_text.hpp"

using namespace rowpump;

namespace {

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("the latency histograms render as cumulative Prometheus buckets", "[metrics]") {
    MetricsSet queues;
    queues.push_back(std::make_unique<QueueMetrics>("users"));
    auto& q = *queues.front();
    q.handled(Millis(250));
    q.handled(Millis(250));
    q.handled(Millis(7000));
    // Two rows due for 10 s at the claim, one without due_since; pushed 1 s after the claim.
    std::vector<ClaimedRow> rows = {{"1", "t1", std::chrono::seconds(10)},
                                    {"2", "t2", std::chrono::seconds(10)},
                                    {"3", "t3", std::nullopt},
                                    {"4", "t4", std::chrono::seconds(-5)}};  // counts as 0
    q.pushed(rows, std::chrono::seconds(1));

    const auto text = render_metrics(queues, "0.1.0");
    CHECK(has_line(text, "# TYPE rowpump_handler_seconds histogram"));
    CHECK(has_line(text, "rowpump_handler_seconds_bucket{queue=\"users\",le=\"0.1\"} 0"));
    CHECK(has_line(text, "rowpump_handler_seconds_bucket{queue=\"users\",le=\"0.25\"} 2"));
    CHECK(has_line(text, "rowpump_handler_seconds_bucket{queue=\"users\",le=\"5\"} 2"));
    CHECK(has_line(text, "rowpump_handler_seconds_bucket{queue=\"users\",le=\"10\"} 3"));
    CHECK(has_line(text, "rowpump_handler_seconds_bucket{queue=\"users\",le=\"+Inf\"} 3"));
    CHECK(has_line(text, "rowpump_handler_seconds_sum{queue=\"users\"} 7.5"));
    CHECK(has_line(text, "rowpump_handler_seconds_count{queue=\"users\"} 3"));

    CHECK(has_line(text, "# TYPE rowpump_due_to_start_seconds histogram"));
    CHECK(has_line(text, "rowpump_due_to_start_seconds_bucket{queue=\"users\",le=\"0.5\"} 0"));
    CHECK(has_line(text, "rowpump_due_to_start_seconds_bucket{queue=\"users\",le=\"1\"} 2"));
    CHECK(has_line(text, "rowpump_due_to_start_seconds_bucket{queue=\"users\",le=\"10\"} 2"));
    CHECK(has_line(text, "rowpump_due_to_start_seconds_bucket{queue=\"users\",le=\"30\"} 4"));
    CHECK(has_line(text, "rowpump_due_to_start_seconds_sum{queue=\"users\"} 24"));
    CHECK(has_line(text, "rowpump_due_to_start_seconds_count{queue=\"users\"} 4"));

    q.set(Gauge::live_workers, 2);
    CHECK(has_line(render_metrics(queues, "0.1.0"), "rowpump_live_workers{queue=\"users\"} 2"));
}
