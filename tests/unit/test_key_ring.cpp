#include <catch2/catch.hpp>

#include "rowpump/dispatcher/loop/key_ring.hpp"

using rowpump::GroupKey;
using rowpump::KeyRing;
using rowpump::KeyTaken;
using rowpump::KeyVisit;

namespace {

std::vector<GroupKey> keys(int n) {
    std::vector<GroupKey> out;
    for (int i = 0; i < n; ++i) out.emplace_back(std::to_string(i));
    return out;
}

const auto kAny = [](const GroupKey&) -> std::int64_t { return 1000000; };
const KeyRing::TimePoint kT0{std::chrono::seconds(1000)};
const auto kIdleFor = std::chrono::seconds(1);

std::int64_t total(const std::vector<KeyVisit>& visits) {
    std::int64_t sum = 0;
    for (const auto& v : visits) sum += v.limit;
    return sum;
}

}  // namespace

TEST_CASE("KeyRing shares a claim's rows evenly over the next keys, never more than asked",
          "[key_ring]") {
    KeyRing ring(100, 4);
    REQUIRE(ring.wants_listing());
    CHECK(!ring.listing_after());
    ring.listed(keys(10));
    auto visits = ring.next(10, kAny, kT0);
    REQUIRE(visits.size() == 4);
    CHECK(*visits[0].key == "0");
    CHECK(*visits[3].key == "3");
    CHECK(total(visits) == 10);
    CHECK(visits[0].limit == 3);
    CHECK(visits[3].limit == 2);
    // The next claim goes on with the next keys.
    visits = ring.next(2, kAny, kT0);
    REQUIRE(visits.size() == 2);
    CHECK(*visits[0].key == "4");
    CHECK(total(visits) == 2);
}

TEST_CASE("KeyRing asks for the keys again once it went round, from the start after a short page",
          "[key_ring]") {
    KeyRing ring(3, 10);
    ring.listed(keys(3));  // a full page: the next one starts after its last key
    ring.next(100, kAny, kT0);
    CHECK(ring.wants_listing());
    REQUIRE(ring.listing_after());
    CHECK(**ring.listing_after() == "2");
    ring.listed({GroupKey("3")});  // short: the last page
    auto visits = ring.next(100, kAny, kT0);
    REQUIRE(visits.size() == 1);
    CHECK(visits[0].limit == 100);
    CHECK(ring.wants_listing());
    CHECK(!ring.listing_after());
}

TEST_CASE("KeyRing passes over idle keys for a while, across listings, and keys at their limit",
          "[key_ring]") {
    KeyRing ring(100, 10);
    ring.listed(keys(3));
    auto visits = ring.next(30, kAny, kT0);
    REQUIRE(visits.size() == 3);
    // Keys 1 and 2 gave nothing: idle until kT0 + 1 s, even once listed again.
    ring.took(visits, {{GroupKey("0"), KeyTaken{10, std::string("t0")}}}, true, kT0 + kIdleFor);
    ring.listed(keys(3));
    visits = ring.next(30, kAny, kT0);
    REQUIRE(visits.size() == 1);
    CHECK(*visits[0].key == "0");
    CHECK(visits[0].cursor == std::optional<std::string>("t0"));
    CHECK(visits[0].limit == 30);
    ring.took(visits, {{GroupKey("0"), KeyTaken{30, std::string("t1")}}}, true, kT0 + kIdleFor);
    ring.listed(keys(3));
    // Past the idle time every key is visited again; key 1 is at its limit.
    visits = ring.next(
        30, [](const GroupKey& key) -> std::int64_t { return *key == "1" ? 0 : 4; },
        kT0 + 2 * kIdleFor);
    REQUIRE(visits.size() == 2);
    CHECK(*visits[0].key == "0");
    CHECK(visits[0].cursor == std::optional<std::string>("t1"));
    CHECK(visits[0].limit == 4);  // cut to its allowance
    CHECK(*visits[1].key == "2");
    CHECK(!visits[1].cursor);
}

TEST_CASE("KeyRing: a key that gave fewer rows than its share starts from its first row again",
          "[key_ring]") {
    KeyRing ring(100, 10);
    ring.listed({GroupKey(), GroupKey("a")});  // NULL is a key too
    auto visits = ring.next(10, kAny, kT0);
    REQUIRE(visits.size() == 2);
    CHECK(!visits[0].key);
    ring.took(visits,
              {{GroupKey(), KeyTaken{5, std::string("x")}},
               {GroupKey("a"), KeyTaken{2, std::string("y")}}},
              true, kT0 + kIdleFor);
    ring.listed({GroupKey(), GroupKey("a")});
    visits = ring.next(10, kAny, kT0);
    CHECK(visits[0].cursor == std::optional<std::string>("x"));
    CHECK(!visits[1].cursor);
}

TEST_CASE("KeyRing goes round a ring that holds every key without a listing", "[key_ring]") {
    KeyRing ring(100, 10);
    ring.listed(keys(3));
    auto visits = ring.next(30, kAny, kT0);
    ring.took(visits, {{GroupKey("0"), KeyTaken{10, std::nullopt}}}, true, kT0 + kIdleFor);
    REQUIRE(ring.wants_listing());
    REQUIRE(ring.rewind());
    CHECK(!ring.wants_listing());
    visits = ring.next(30, kAny, kT0);
    REQUIRE(visits.size() == 1);  // keys 1 and 2 are still idle
    CHECK(*visits[0].key == "0");
    // A page that is not the whole table is listed again, not rewound.
    KeyRing paged(3, 10);
    paged.listed(keys(3));
    paged.next(30, kAny, kT0);
    CHECK(!paged.rewind());
}

TEST_CASE("KeyRing shares a claim's rows in proportion to the keys' weights", "[key_ring]") {
    KeyRing ring(100, 10);
    ring.listed(keys(3));
    const auto weighted = [](const GroupKey& key) -> std::optional<KeyRing::KeyShare> {
        return KeyRing::KeyShare{1000000, *key == "0" ? 3 : 1};
    };
    auto visits = ring.next_shares(50, weighted, kT0);
    REQUIRE(visits.size() == 3);
    CHECK(visits[0].limit == 30);  // 50 * 3/5
    CHECK(visits[1].limit == 10);
    CHECK(visits[2].limit == 10);
    CHECK(total(visits) == 50);
    // A claim smaller than the weights: the keys until their weights reach it.
    ring.listed(keys(3));
    visits = ring.next_shares(3, weighted, kT0);
    REQUIRE(visits.size() == 1);
    CHECK(visits[0].limit == 3);
    visits = ring.next_shares(3, weighted, kT0);  // goes on with the next keys
    REQUIRE(visits.size() == 2);
    CHECK(*visits[0].key == "1");
    CHECK(total(visits) == 3);
}

TEST_CASE("KeyRing holds back a key at its rate until its window opens, across listings",
          "[key_ring]") {
    KeyRing ring(100, 10);
    ring.listed(keys(3));
    ring.hold_back(GroupKey("1"), kT0 + kIdleFor);
    ring.listed(keys(3));
    CHECK(ring.upcoming(10, kT0) == std::vector<GroupKey>{GroupKey("0"), GroupKey("2")});
    auto visits = ring.next(30, kAny, kT0);
    REQUIRE(visits.size() == 2);
    CHECK(*visits[1].key == "2");
    ring.listed(keys(3));
    CHECK(ring.upcoming(2, kT0 + kIdleFor).size() == 2);
    visits = ring.next(30, kAny, kT0 + kIdleFor);
    CHECK(visits.size() == 3);
}

TEST_CASE("KeyRing stops before a key whose share is not known yet", "[key_ring]") {
    KeyRing ring(100, 10);
    ring.listed(keys(4));
    const auto known_to_1 = [](const GroupKey& key) -> std::optional<KeyRing::KeyShare> {
        if (*key == "2") return std::nullopt;
        return KeyRing::KeyShare{5, 1};
    };
    auto visits = ring.next_shares(40, known_to_1, kT0);
    REQUIRE(visits.size() == 2);
    CHECK(visits[0].limit == 5);                             // cut to the allowance
    CHECK(ring.upcoming(10, kT0).front() == GroupKey("2"));  // the next claim starts there
}

TEST_CASE("KeyRing says when every key is held back, and until when", "[key_ring]") {
    KeyRing ring(100, 10);
    ring.listed(keys(3));
    CHECK(!ring.all_held_until(kT0));
    ring.hold_back(GroupKey("0"), kT0 + std::chrono::seconds(3));
    ring.hold_back(GroupKey("1"), kT0 + std::chrono::seconds(2));
    CHECK(!ring.all_held_until(kT0));  // key 2 may take rows
    ring.hold_back(GroupKey("2"), kT0 + std::chrono::seconds(5));
    REQUIRE(ring.all_held_until(kT0));
    CHECK(*ring.all_held_until(kT0) == kT0 + std::chrono::seconds(2));
    CHECK(!ring.all_held_until(kT0 + std::chrono::seconds(2)));  // key 1's window opened
    // Held back across listings: the marks stay with keys listed again.
    ring.listed(keys(3));
    CHECK(*ring.all_held_until(kT0) == kT0 + std::chrono::seconds(2));
}
