// How the dispatchers of a queue with shards share them (shard_balance.hpp).

#include <catch2/catch.hpp>

#include "rowpump/dispatcher/loop/shard_balance.hpp"

using namespace rowpump;

TEST_CASE("the process behind a leader id", "[shards]") {
    CHECK(process_of("db1:4242:8f3a0c11") == "db1:4242");
    CHECK(process_of("host.example:7:x") == "host.example:7");
}

TEST_CASE("a shard is handed to a stand-by only when that evens the count out", "[shards]") {
    const std::string a1 = "h:1:a", a2 = "h:1:b", a3 = "h:1:c", b1 = "h:2:a", b2 = "h:2:b";
    // Process 1 leads all three, process 2 offers itself: hand over.
    CHECK(should_hand_over({a1, a2, a3}, a1, b1));
    // Two against one is as even as three shards get.
    CHECK_FALSE(should_hand_over({a1, a2, b1}, a1, b2));
    // A shard nobody leads does not count for anyone.
    CHECK_FALSE(should_hand_over({a1, "", ""}, a1, b1));
    CHECK(should_hand_over({a1, a2, ""}, a1, b1));
    // No stand-by, or one of the same process (another loop of it): nothing to do.
    CHECK_FALSE(should_hand_over({a1, a2, a3}, a1, ""));
    CHECK_FALSE(should_hand_over({a1, a2, a3}, a1, a2));
}

TEST_CASE("one hand-over per pause in a process", "[shards]") {
    ShardBalance balance(Millis(1000));
    CHECK(balance.pause() == Millis(2000));
    const TimePoint t0{std::chrono::seconds(100)};
    CHECK(balance.try_hand_over(t0));
    CHECK_FALSE(balance.try_hand_over(t0));
    CHECK_FALSE(balance.try_hand_over(t0 + Millis(1999)));
    CHECK(balance.try_hand_over(t0 + Millis(2000)));
}
