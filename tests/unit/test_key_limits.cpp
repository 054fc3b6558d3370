#include <catch2/catch.hpp>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/key_limits.hpp"

using namespace rowpump;

namespace {

std::string error_of(std::string_view text) {
    std::string error;
    const auto limit = parse_key_limit(text, error);
    return limit ? "" : error;
}

}  // namespace

TEST_CASE("a key's limits parse from name=value pairs, any subset, and format back",
          "[key_limits]") {
    std::string error;
    auto limit = parse_key_limit("rate=100/1s concurrency=5 weight=3", error);
    REQUIRE(limit);
    CHECK(limit->rate->count == 100);
    CHECK(limit->rate->per == Millis(1000));
    CHECK(*limit->concurrency == 5);
    CHECK(*limit->weight == 3);
    CHECK(format_key_limit(*limit) == "rate=100/1s concurrency=5 weight=3");
    limit = parse_key_limit("  weight=1000 ", error);
    REQUIRE(limit);
    CHECK(!limit->rate);
    CHECK(format_key_limit(*limit) == "weight=1000");
    CHECK(format_key_limit(*parse_key_limit("rate=10/s", error)) == "rate=10/1s");
}

TEST_CASE("bad per-key limits are refused, naming the part that is wrong", "[key_limits]") {
    CHECK(error_of("") == "names no limit (rate=N/period, concurrency=N or weight=N)");
    CHECK(error_of("rate") ==
          "'rate' is not name=value (rate=N/period, concurrency=N or weight=N)");
    CHECK(error_of("rate=fast").rfind("'rate=fast': a rate is N/period", 0) == 0);
    CHECK(error_of("rate=0/1s").rfind("'rate=0/1s': a rate is N/period", 0) == 0);
    CHECK(error_of("rate=1/0s").rfind("'rate=1/0s': a rate is N/period", 0) == 0);
    CHECK(error_of("rate=1/9000h").rfind("'rate=1/9000h': a rate is N/period", 0) == 0);
    CHECK(error_of("rate=1/1s rate=2/1s") == "rate given twice");
    CHECK(error_of("weight=0") == "'weight=0': weight is a whole number from 1 to 1000");
    CHECK(error_of("weight=1001") == "'weight=1001': weight is a whole number from 1 to 1000");
    CHECK(error_of("weight=-1") == "'weight=-1': weight is a whole number from 1 to 1000");
    CHECK(error_of("concurrency=99999999999") ==
          "'concurrency=99999999999': concurrency is a whole number from 1 to 1000000000");
    CHECK(error_of("concurrency=2 concurrency=2") == "concurrency given twice");
    CHECK(error_of("speed=3") == "unknown limit 'speed=3' (rate, concurrency or weight)");
    CHECK(error_of("weight=\x1b[31m") ==
          "'weight=\\x1B[31m': weight is a whole number from 1 to 1000");  // escaped
    CHECK(error_of(std::string(257, 'w')) == "longer than 256 bytes");
    CHECK(check_limit_key("").find("empty") != std::string::npos);
    CHECK(check_limit_key(std::string(255, 'k')).empty());
    CHECK(check_limit_key(std::string(256, 'k')) == "a key is 1 to 255 bytes, got 256");
}

TEST_CASE("KeyLimits: the queue's limits, overrides per key, bad fields refused alone",
          "[key_limits]") {
    QueueConfig queue;
    queue.group_by = "tenant";
    queue.rate_per_key = Rate{10, Millis(1000)};
    KeyLimits limits(queue);
    CHECK(limits.any_rate());
    CHECK(!limits.any_concurrency());
    CHECK(limits.weight(GroupKey("1")) == 1);
    const auto refused = limits.load({{"1", "rate=100/1s weight=3"},
                                      {"2", "concurrency=2"},
                                      {"3", "rate=banana"},
                                      {std::string(256, 'k'), "weight=2"}});
    REQUIRE(refused.size() == 2);
    CHECK(refused[0].rfind("key '3' (value 'rate=banana'): 'rate=banana': a rate is", 0) == 0);
    CHECK(refused[1].find("a key is 1 to 255 bytes, got 256") != std::string::npos);
    CHECK(limits.overrides() == 2);
    CHECK(limits.rate(GroupKey("1"))->count == 100);
    CHECK(limits.weight(GroupKey("1")) == 3);
    CHECK(limits.rate(GroupKey("2"))->count == 10);  // the queue's
    CHECK(limits.concurrency(GroupKey("2")) == 2);
    CHECK(limits.concurrency(GroupKey("1")) == 0);
    CHECK(limits.any_concurrency());
    CHECK(limits.rate(GroupKey("3"))->count == 10);  // refused: the queue's
    CHECK(limits.rate(GroupKey())->count == 10);     // NULL: never overridden
    // Too many fields: the overrides stay as they were.
    std::vector<std::pair<std::string, std::string>> many;
    for (std::size_t i = 0; i <= kMaxKeyLimitOverrides; ++i)
        many.emplace_back(std::to_string(i), "weight=2");
    CHECK(limits.load(many).size() == 1);
    CHECK(limits.weight(GroupKey("1")) == 3);
    // Emptied: back to the queue's.
    CHECK(limits.load({}).empty());
    CHECK(limits.weight(GroupKey("1")) == 1);
    CHECK(!limits.any_concurrency());
    CHECK(key_rate_field(GroupKey("")) == "=");
    CHECK(key_rate_field(GroupKey()) == "null");
}
