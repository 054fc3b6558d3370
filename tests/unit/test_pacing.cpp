#include <catch2/catch.hpp>

#include <limits>

#include "rowpump/dispatcher/loop/pacing.hpp"

using rowpump::Millis;
using rowpump::Rate;
using rowpump::RateLimiter;
using rowpump::TimePoint;

namespace {
const TimePoint t0{std::chrono::seconds(1000)};
}

TEST_CASE("without a rate every row may go", "[pacing]") {
    RateLimiter limiter(std::nullopt);
    limiter.record(t0, 1'000'000);
    CHECK(limiter.available(t0) == std::numeric_limits<std::int64_t>::max());
    CHECK(limiter.next_available(t0) == t0);
}

TEST_CASE("1/3s allows one dispatch, then none until 3 s after it", "[pacing]") {
    RateLimiter limiter(Rate{1, Millis(3000)});
    CHECK(limiter.available(t0) == 1);
    limiter.record(t0, 1);
    CHECK(limiter.available(t0) == 0);
    CHECK(limiter.available(t0 + Millis(2999)) == 0);
    CHECK(limiter.next_available(t0 + Millis(1)) == t0 + Millis(3000));
    CHECK(limiter.available(t0 + Millis(3000)) == 1);
}

TEST_CASE("N/period is a sliding window over the rows dispatched", "[pacing]") {
    RateLimiter limiter(Rate{10, Millis(1000)});
    limiter.record(t0, 4);
    limiter.record(t0 + Millis(400), 6);
    CHECK(limiter.available(t0 + Millis(500)) == 0);
    // One more row fits when the first 4 leave the window, not before.
    CHECK(limiter.next_available(t0 + Millis(500)) == t0 + Millis(1000));
    CHECK(limiter.available(t0 + Millis(1000)) == 4);
    CHECK(limiter.available(t0 + Millis(1400)) == 10);
}

TEST_CASE("next_available waits for enough rows to leave an overfull window", "[pacing]") {
    RateLimiter limiter(Rate{2, Millis(100)});
    limiter.record(t0, 1);
    limiter.record(t0 + Millis(10), 5);  // a batch may overshoot when the rate changed
    CHECK(limiter.available(t0 + Millis(20)) == 0);
    CHECK(limiter.next_available(t0 + Millis(20)) == t0 + Millis(110));
}

TEST_CASE("capacity is the least of batch, free backlog and rate", "[pacing]") {
    using rowpump::dispatch_capacity;
    CHECK(dispatch_capacity(1000, 20000, 0, 1'000'000) == 1000);
    CHECK(dispatch_capacity(1000, 20000, 19500, 1'000'000) == 500);
    CHECK(dispatch_capacity(1000, 20000, 20000, 1'000'000) == 0);
    CHECK(dispatch_capacity(1000, 20000, 25000, 1'000'000) == 0);  // never negative
    CHECK(dispatch_capacity(1000, 20000, 0, 1) == 1);
    CHECK(dispatch_capacity(1000, 20000, 0, 0) == 0);
}

TEST_CASE("with shards, each takes its share of the free backlog and the rate", "[pacing]") {
    using rowpump::dispatch_capacity;
    constexpr auto kNoRate = std::numeric_limits<std::int64_t>::max();
    CHECK(dispatch_capacity(1000, 20000, 0, kNoRate, 3) == 1000);
    CHECK(dispatch_capacity(1000, 20000, 19000, kNoRate, 3) == 334);  // rounded up
    CHECK(dispatch_capacity(1000, 20000, 19999, kNoRate, 3) == 1);    // never 0 while room
    CHECK(dispatch_capacity(1000, 20000, 20000, kNoRate, 3) == 0);
    CHECK(dispatch_capacity(1000, 20000, 25000, kNoRate, 3) == 0);
    CHECK(dispatch_capacity(1000, 20000, 0, 10, 3) == 4);
    CHECK(dispatch_capacity(1000, 20000, 0, 1, 3) == 1);
    CHECK(dispatch_capacity(1000, 20000, 0, 0, 3) == 0);
}

TEST_CASE("idle backoff doubles up to its cap and resets", "[pacing]") {
    rowpump::Backoff backoff(Millis(50), Millis(300));
    CHECK(backoff.next() == Millis(50));
    CHECK(backoff.next() == Millis(100));
    CHECK(backoff.next() == Millis(200));
    CHECK(backoff.next() == Millis(300));
    CHECK(backoff.next() == Millis(300));
    backoff.reset();
    CHECK(backoff.next() == Millis(50));
}

TEST_CASE("retry backoff is exponential, capped, with equal jitter", "[pacing]") {
    rowpump::RetryConfig retry;
    retry.base = Millis(1000);
    retry.cap = Millis(60000);
    using rowpump::retry_backoff;
    CHECK(retry_backoff(retry, 1, 0.0) == Millis(500));
    CHECK(retry_backoff(retry, 1, 0.999) == Millis(999));
    CHECK(retry_backoff(retry, 3, 0.0) == Millis(2000));
    CHECK(retry_backoff(retry, 3, 0.5) == Millis(3000));
    CHECK(retry_backoff(retry, 7, 0.0) == Millis(30000));  // 64 s capped at 60 s
    CHECK(retry_backoff(retry, 1000, 1.0) == Millis(60000));
    for (int attempt = 1; attempt < 80; ++attempt) {
        auto d = retry_backoff(retry, attempt, 0.25);
        CHECK(d >= Millis(500));
        CHECK(d <= retry.cap);
    }
}
