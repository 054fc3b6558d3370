// A lasting failure is logged once, summarised every interval, and its end is logged once.

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "rowpump/dispatcher/loop/outage_log.hpp"

using namespace rowpump;

TEST_CASE("an outage is logged when it starts, every interval while it lasts, and when it ends",
          "[dispatcher]") {
    std::vector<std::pair<spdlog::level::level_enum, std::string>> lines;
    OutageLog log("queue q", Millis(30000), [&](auto level, const std::string& text) {
        if (level != spdlog::level::debug) lines.emplace_back(level, text);
    });
    const TimePoint t0{};
    log.succeeded(t0);  // nothing to end
    for (int s = 0; s <= 70; ++s)
        log.failed("MySQL down", true, Millis(5000), t0 + std::chrono::seconds(s));
    log.succeeded(t0 + std::chrono::seconds(71));
    log.succeeded(t0 + std::chrono::seconds(72));
    log.failed("Redis: WRONGPASS", false, Millis(100), t0 + std::chrono::seconds(80));

    using L = spdlog::level::level_enum;
    CHECK(lines == std::vector<std::pair<L, std::string>>{
                       {L::warn, "queue q: MySQL down; retrying in 5s"},
                       {L::warn,
                        "queue q: still failing after 30s (31 attempts); last: MySQL down; "
                        "retrying in 5s"},
                       {L::warn,
                        "queue q: still failing after 1m (61 attempts); last: MySQL down; "
                        "retrying in 5s"},
                       {L::info, "queue q: recovered after 71s (71 failed attempts)"},
                       {L::err, "queue q: Redis: WRONGPASS; retrying in 100ms"}});
}
