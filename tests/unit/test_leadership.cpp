#include <catch2/catch.hpp>

#include "rowpump/dispatcher/leadership.hpp"

using rowpump::Clock;
using rowpump::Leadership;
using rowpump::Millis;

TEST_CASE("a leader renews at half the timeout and knows when its lock may have lapsed",
          "[leadership]") {
    Leadership leadership("q", Millis(3000));
    const auto t0 = Clock::now();
    CHECK(leadership.renewal_due(t0));       // a stand-by always asks
    CHECK(!leadership.may_have_lapsed(t0));  // nothing to lapse
    REQUIRE(leadership.update(leadership.id()));
    leadership.renewed(t0);
    CHECK(!leadership.renewal_due(t0 + Millis(1499)));
    CHECK(leadership.renewal_due(t0 + Millis(1500)));
    CHECK(!leadership.may_have_lapsed(t0 + Millis(2699)));
    CHECK(leadership.may_have_lapsed(t0 + Millis(2700)));  // a tenth of the timeout to spare
    leadership.lost();
    CHECK(!leadership.may_have_lapsed(t0 + Millis(5000)));
}
