#include <catch2/catch.hpp>

#include "rowpump/dispatcher/loop/leadership.hpp"

using rowpump::Clock;
using rowpump::Leadership;
using rowpump::Millis;

TEST_CASE("a leader renews its lock at half the timeout, a stand-by asks every time",
          "[leadership]") {
    Leadership leadership("q", Millis(3000));
    const auto t0 = Clock::now();
    CHECK(leadership.renewal_due(t0));  // a stand-by always asks
    REQUIRE(leadership.update(leadership.id()));
    leadership.renewed(t0);
    CHECK(!leadership.renewal_due(t0 + Millis(1499)));
    CHECK(leadership.renewal_due(t0 + Millis(1500)));
    leadership.lost();
    CHECK(leadership.renewal_due(t0));
}
