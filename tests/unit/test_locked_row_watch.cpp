#include <catch2/catch.hpp>

#include "rowpump/dispatcher/loop/locked_row_watch.hpp"

using namespace std::chrono_literals;
using rowpump::LockedRowWatch;
using Ids = std::vector<std::string>;

TEST_CASE("a row passed over by looks at least check_every apart is reported once",
          "[locked_rows]") {
    LockedRowWatch watch(5s);
    const auto t0 = LockedRowWatch::Clock::time_point{} + 1h;
    CHECK(watch.look_due(t0));
    CHECK(watch.looked({"7", "9"}, t0).empty());  // seen once: it may just have come due
    CHECK(!watch.look_due(t0 + 4s));
    REQUIRE(watch.look_due(t0 + 5s));
    CHECK(watch.looked({"7"}, t0 + 5s) == Ids{"7"});
    CHECK(watch.looked({"7", "9"}, t0 + 10s).empty());  // 7 already reported; 9 seen anew
    CHECK(watch.looked({"7", "9"}, t0 + 15s) == Ids{"9"});
}

TEST_CASE("a row that a look no longer finds is forgotten, and reported again if held again",
          "[locked_rows]") {
    LockedRowWatch watch(5s);
    const auto t0 = LockedRowWatch::Clock::time_point{} + 1h;
    watch.looked({"7"}, t0);
    CHECK(watch.looked({"7"}, t0 + 5s) == Ids{"7"});
    CHECK(watch.looked({}, t0 + 10s).empty());
    CHECK(watch.looked({"7"}, t0 + 15s).empty());
    CHECK(watch.looked({"7"}, t0 + 20s) == Ids{"7"});
}
