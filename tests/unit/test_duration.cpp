#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "rowpump/common/duration.hpp"

using namespace rowpump;

namespace {

std::int64_t millis(std::string_view text) {
    auto d = parse_duration(text);
    INFO(text);
    REQUIRE(d);
    return d->count();
}

}  // namespace

TEST_CASE("durations parse with every unit", "[duration]") {
    CHECK(millis("250ms") == 250);
    CHECK(millis("10s") == 10000);
    CHECK(millis("5m") == 300000);
    CHECK(millis("1h") == 3600000);
    CHECK(millis("0s") == 0);
    CHECK(millis("0ms") == 0);
    CHECK(millis("007s") == 7000);
}

TEST_CASE("durations may be sums", "[duration]") {
    CHECK(millis("1m30s") == 90000);
    CHECK(millis("1h2m3s4ms") == 3723004);
    CHECK(millis("1s1s") == 2000);
    CHECK(millis("500ms1h") == 3600500);
}

TEST_CASE("malformed durations are rejected", "[duration]") {
    for (const char* bad : {"", "10", "s", "ms", "-1s", "+1s", "1.5s", "10x", "10 s", " 10s",
                            "10s ", "1m30", "10S", "1d", "10sec", "1_000ms", "0x10s"}) {
        INFO("'" << bad << "'");
        CHECK_FALSE(parse_duration(bad));
    }
}

TEST_CASE("durations that overflow are rejected", "[duration]") {
    // The largest accepted total is INT64_MAX / 1000 milliseconds.
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max() / 1000;
    CHECK(millis(std::to_string(kMax) + "ms") == kMax);
    CHECK_FALSE(parse_duration(std::to_string(kMax + 1) + "ms"));
    CHECK_FALSE(parse_duration(std::to_string(kMax) + "s"));
    CHECK_FALSE(parse_duration(std::to_string(kMax / 1000 + 1) + "s"));
    CHECK_FALSE(parse_duration("99999999999999999999999999h"));
    CHECK_FALSE(parse_duration(std::to_string(kMax) + "ms1ms"));
    CHECK_FALSE(
        parse_duration(std::to_string(kMax / 2 + 1) + "ms" + std::to_string(kMax / 2 + 1) + "ms"));
}

TEST_CASE("durations format in the shortest exact unit", "[duration]") {
    CHECK(format_duration(Millis(0)) == "0ms");
    CHECK(format_duration(Millis(250)) == "250ms");
    CHECK(format_duration(Millis(1500)) == "1500ms");
    CHECK(format_duration(Millis(3000)) == "3s");
    CHECK(format_duration(Millis(90000)) == "90s");
    CHECK(format_duration(Millis(300000)) == "5m");
    CHECK(format_duration(Millis(5400000)) == "90m");
    CHECK(format_duration(Millis(7200000)) == "2h");
}

TEST_CASE("format and parse round trip", "[duration]") {
    for (std::int64_t ms : {0LL, 1LL, 999LL, 1000LL, 1001LL, 59999LL, 60000LL, 61000LL, 3599999LL,
                            3600000LL, 86400000LL, 123456789LL}) {
        INFO(ms);
        auto text = format_duration(Millis(ms));
        auto back = parse_duration(text);
        REQUIRE(back);
        CHECK(back->count() == ms);
    }
    for (const char* text : {"250ms", "10s", "5m", "1h", "1500ms"}) {
        CHECK(format_duration(*parse_duration(text)) == text);
    }
}
