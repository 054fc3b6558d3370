// The per-key figures of a queue with group_by: the top keys, the rest together, the bound on
// keys counted one by one, the hash they are published in, and a key's text in a label.

#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "rowpump/common/protocol/key_gauges.hpp"
#include "rowpump/dispatcher/observe/key_figures.hpp"
#include "rowpump/dispatcher/observe/metrics_text.hpp"

using namespace rowpump;
using Key = KeyFigures::Key;

TEST_CASE(
    "the top keys are those with most in flight, then most pushed lately, then most "
    "pushed; the rest add up to `other`",
    "[key_figures]") {
    KeyFigures figures;
    // Keys k0..k9 pushed 1..10 tasks; NULL 4.
    std::map<Key, std::int64_t> pushed;
    for (int i = 0; i < 10; ++i) pushed["k" + std::to_string(i)] = i + 1;
    pushed[std::nullopt] = 4;
    figures.pushed(pushed);
    auto top = figures.take_top(3);
    REQUIRE(top.top.size() == 3);
    CHECK(top.top[0].key == Key("k9"));
    CHECK(top.top[0].pushed == 10);
    CHECK(top.top[0].recent == 10);
    CHECK(top.top[1].key == Key("k8"));
    CHECK(top.top[2].key == Key("k7"));
    CHECK(!top.top[0].in_flight);  // not counted (no concurrency_per_key)
    CHECK(top.other.pushed == 55 + 4 - 10 - 9 - 8);
    CHECK(top.other.recent == top.other.pushed);

    // In the next interval k0 pushes 2 more, and k1 holds 3 in flight: k1 first, then k0
    // (most recent), then the biggest total.
    figures.pushed({{Key("k0"), 2}});
    figures.in_flight({{Key("k1"), 3}, {Key("k2"), 1}});
    figures.passed_over({Key("k1"), Key("k1")});
    top = figures.take_top(3);
    REQUIRE(top.top.size() == 3);
    CHECK(top.top[0].key == Key("k1"));
    CHECK(top.top[0].in_flight == 3);
    CHECK(top.top[0].passed_over == 2);
    CHECK(top.top[1].key == Key("k2"));
    CHECK(top.top[2].key == Key("k0"));
    CHECK(top.top[2].recent == 2);
    CHECK(top.top[2].pushed == 3);
    CHECK(top.other.in_flight == 0);
    CHECK(top.other.passed_over == 0);
    CHECK(top.other.pushed == 61 - 2 - 3 - 3);
    CHECK(top.other.recent == 0);
    // No interval without pushes: everything lately is 0 again.
    top = figures.take_top(20);
    for (const auto& f : top.top) CHECK(f.recent == 0);
    CHECK(top.top.size() == 11);
    CHECK(top.other.pushed == 0);
}

TEST_CASE("keys past the bound are counted in `other` only", "[key_figures]") {
    KeyFigures figures;
    std::map<Key, std::int64_t> pushed;
    for (std::size_t i = 0; i < KeyFigures::kKept + 5; ++i) pushed["key" + std::to_string(i)] = 1;
    figures.pushed(pushed);
    // The keys kept are the first kKept in key order; the next 5 are known only in the total.
    figures.pushed({{Key("zzz"), 100}});
    auto top = figures.take_top(2);
    CHECK(top.top[0].pushed == 1);
    CHECK(top.other.pushed == static_cast<std::int64_t>(KeyFigures::kKept + 5 - 2 + 100));
    // After the publication only kKeptAfterTop keys stay: zzz has room again.
    figures.pushed({{Key("zzz"), 100}});
    top = figures.take_top(2);
    CHECK(top.top[0].key == Key("zzz"));
    CHECK(top.top[0].pushed == 100);
}

TEST_CASE("the key gauges hash round-trips, any key text included, and is read bounded",
          "[key_figures][protocol]") {
    protocol::KeyGauges g;
    g.leader = "host:1";
    g.at_ms = 1234;
    g.top.push_back({std::string("a \"quoted\"\nkey <script>x</script>"), 7, 2, 1, 3});
    g.top.push_back({std::nullopt, 5, 0, 0, 0});
    g.top.push_back({std::string("key:nested"), 9, 0, 0, 0});
    g.other = {std::nullopt, 100, 4, 2, 6};
    const auto back = protocol::parse_key_gauges(protocol::key_gauge_fields(g));
    REQUIRE(back);
    CHECK(back->leader == "host:1");
    CHECK(back->at_ms == 1234);
    REQUIRE(back->top.size() == 3);
    CHECK(back->top[0].key == g.top[0].key);  // in flight first
    CHECK(back->top[0].in_flight == 3);
    CHECK(back->top[1].key == Key("key:nested"));
    CHECK(back->top[2].key == std::nullopt);
    CHECK(back->other.pushed == 100);
    CHECK(back->other.in_flight == 6);

    // Anyone can write the hash: values that do not parse are dropped, and at most kTopKeys
    // keys are kept.
    std::vector<std::string> fields{"key:bad", "pushed=x", "key:neg", "pushed=-3", "junk", "1"};
    for (std::size_t i = 0; i < protocol::kTopKeys + 10; ++i) {
        fields.push_back("key:" + std::to_string(i));
        fields.push_back("pushed=" + std::to_string(i));
    }
    const auto many = protocol::parse_key_gauges(fields);
    REQUIRE(many);
    REQUIRE(many->top.size() == protocol::kTopKeys);
    CHECK(many->top[0].pushed == static_cast<std::int64_t>(protocol::kTopKeys + 9));
    CHECK(!protocol::parse_key_gauges({}));
}

TEST_CASE("a key's text in a label value is escaped as the Prometheus text format wants",
          "[key_figures][metrics]") {
    CHECK(label_value("plain 42") == "plain 42");
    CHECK(label_value("a\"b") == "a\\\"b");
    CHECK(label_value("a\\b") == "a\\\\b");
    CHECK(label_value("line\nnext") == "line\\nnext");
    CHECK(label_value("<script>alert(1)</script>") == "<script>alert(1)</script>");
    CHECK(label_value("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") ==
          "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
    // Not UTF-8: a lone continuation byte, a cut sequence, an overlong form, a surrogate.
    CHECK(label_value("a\x80z") == "a\xEF\xBF\xBDz");
    CHECK(label_value("a\xE2\x82") == "a\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(label_value("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(label_value("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("/metrics shows the published top keys and `other`, one label value each",
          "[key_figures][metrics]") {
    MetricsSet queues;
    queues.push_back(std::make_unique<QueueMetrics>("tenants"));
    auto& keys = queues.front()->keys();
    const std::string text = render_metrics(queues, "0.1.0");
    CHECK(text.find("# TYPE rowpump_key_pushed_total counter") != std::string::npos);
    CHECK(text.find("rowpump_key_pushed_total{") == std::string::npos);  // nothing published

    keys.pushed({{Key("t\"1\n"), 3}, {std::nullopt, 1}, {Key("t2"), 1}});
    keys.show(keys.take_top(2));
    const std::string shown = render_metrics(queues, "0.1.0");
    CHECK(shown.find("\nrowpump_key_pushed_total{queue=\"tenants\",key=\"t\\\"1\\n\"} 3\n") !=
          std::string::npos);
    // NULL and t2 tie on everything; NULL sorts first.
    CHECK(shown.find("\nrowpump_key_pushed_total{queue=\"tenants\",key=\"(null)\"} 1\n") !=
          std::string::npos);
    CHECK(shown.find("\nrowpump_key_pushed_total{queue=\"tenants\",key=\"(other)\"} 1\n") !=
          std::string::npos);
    CHECK(shown.find("rowpump_key_in_flight{") == std::string::npos);  // not counted
}
