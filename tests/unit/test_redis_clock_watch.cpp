// RedisClockWatch: a step of the Redis server's wall clock, told from the round trip's noise,
// holds the reaper for its grace after a step forward only.

#include <catch2/catch.hpp>

#include "rowpump/dispatcher/loop/redis_clock_watch.hpp"

using rowpump::RedisClockWatch;
using namespace std::chrono_literals;

TEST_CASE("redis clock watch: a steady clock reaps, a step forward holds for the grace",
          "[reaper]") {
    RedisClockWatch watch;
    const auto t0 = rowpump::TimePoint{} + 1000h;
    const std::int64_t s0 = 1'700'000'000'000;
    auto first = watch.look(s0, t0);
    CHECK(first.reap);
    CHECK(!first.step);
    // One second later on both clocks, give or take the round trip.
    auto steady = watch.look(s0 + 1000 + 400, t0 + 1s);
    CHECK(steady.reap);
    CHECK(!steady.step);
    // The server's clock jumps 60 s ahead: no reap until the grace is over on our clock.
    auto stepped = watch.look(s0 + 1400 + 61000, t0 + 2s);
    REQUIRE(stepped.step);
    CHECK(stepped.step->count() == 60000);
    CHECK(!stepped.reap);
    CHECK(!watch.look(s0 + 62400 + 30000, t0 + 32s).reap);
    auto after = watch.look(s0 + 62400 + 60000, t0 + 62s);
    CHECK(after.reap);
    CHECK(!after.step);
}

TEST_CASE("redis clock watch: a step back is reported and does not hold", "[reaper]") {
    RedisClockWatch watch;
    const auto t0 = rowpump::TimePoint{} + 1000h;
    const std::int64_t s0 = 1'700'000'000'000;
    watch.look(s0, t0);
    auto back = watch.look(s0 - 3600'000, t0 + 1s);
    REQUIRE(back.step);
    CHECK(back.step->count() == -3601000);
    CHECK(back.reap);
}
