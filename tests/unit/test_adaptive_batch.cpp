#include <catch2/catch.hpp>

#include <chrono>

#include "adaptive_batch.hpp"

using rowpump::details::AdaptiveBatch;
using namespace std::chrono_literals;

namespace {

// Rounds of a thread whose handler takes `per_task` and whose round trips take `round_trip`,
// with a ready list that always has `waiting` tasks.
void rounds(AdaptiveBatch& batch, int count, AdaptiveBatch::Duration per_task,
            AdaptiveBatch::Duration round_trip, int waiting) {
    for (int i = 0; i < count; ++i) {
        const int asked = batch.next();
        const int got = std::min(asked, waiting);
        batch.fetched(asked, got, round_trip);
        batch.handled(got, got * per_task);
    }
}

}  // namespace

TEST_CASE("the adaptive batch starts at one task", "[worker]") {
    AdaptiveBatch batch;
    CHECK(batch.next() == 1);
    batch.fetched(1, 1, 200us);  // no handler measured yet: nothing to go by
    CHECK(batch.next() == 1);
}

TEST_CASE("fast handlers on a long ready list double the batch up to its limit", "[worker]") {
    AdaptiveBatch batch(64);
    batch.handled(1, 1us);
    int previous = batch.next();
    for (int expected : {2, 4, 8, 16, 32, 64, 64}) {
        batch.fetched(previous, previous, 200us);
        batch.handled(previous, previous * 1us);
        CHECK(batch.next() == expected);
        previous = batch.next();
    }
}

TEST_CASE("a slow handler brings the batch back to one at once", "[worker]") {
    AdaptiveBatch batch;
    rounds(batch, 10, 1us, 200us, 1000);
    REQUIRE(batch.next() == AdaptiveBatch::kDefaultLimit);
    batch.handled(16, 16 * 10ms);  // handlers now take 10 ms each
    CHECK(batch.next() == 1);
    rounds(batch, 10, 10ms, 200us, 1000);
    CHECK(batch.next() == 1);
}

TEST_CASE("handlers as slow as a round trip never take more than one", "[worker]") {
    AdaptiveBatch batch;
    rounds(batch, 20, 200us, 200us, 1000);
    CHECK(batch.next() == 1);
    rounds(batch, 20, 10ms, 200us, 1000);
    CHECK(batch.next() == 1);
}

TEST_CASE("a batch's handlers together take no longer than a round trip", "[worker]") {
    for (auto per_task : {1us, 10us, 25us, 50us, 99us, 150us}) {
        AdaptiveBatch batch;
        rounds(batch, 20, per_task, 200us, 1000);
        INFO("handler " << per_task.count() << " us: batch " << batch.next());
        CHECK(batch.next() * per_task <= 200us);
        CHECK(batch.next() >= 1);
    }
    AdaptiveBatch batch;
    rounds(batch, 20, 50us, 200us, 1000);
    CHECK(batch.next() == 4);
}

TEST_CASE("a short ready list keeps the batch near what it holds", "[worker]") {
    AdaptiveBatch batch;
    rounds(batch, 20, 1us, 200us, 1000);
    REQUIRE(batch.next() == AdaptiveBatch::kDefaultLimit);
    rounds(batch, 1, 1us, 200us, 3);  // only 3 waiting
    CHECK(batch.next() == 3);
    rounds(batch, 20, 1us, 200us, 3);
    CHECK(batch.next() <= 6);
    rounds(batch, 1, 1us, 200us, 0);  // an empty list: start again from one
    CHECK(batch.next() == 1);
}

TEST_CASE("one slow round trip does not decide alone", "[worker]") {
    AdaptiveBatch batch;
    rounds(batch, 20, 20us, 200us, 1000);
    REQUIRE(batch.next() == 10);
    batch.fetched(10, 10, 2us);  // one unusually quick answer
    batch.handled(10, 10 * 20us);
    CHECK(batch.next() >= 7);
}
