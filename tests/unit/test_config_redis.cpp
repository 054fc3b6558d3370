// The `redis:` section's three shapes: one server, a Sentinel group, a Cluster.

#include <catch2/catch.hpp>

#include <string>

#include "config_text.hpp"
#include "rowpump/common/redis/redis_route.hpp"

using namespace rowpump;

namespace {

std::string with_redis(const std::string& redis_lines) {
    // redis: starts on line 7, its first key on line 8.
    return kHead + kBody + "redis:\n" + redis_lines;
}

void check_redis_error(const std::string& redis_lines, int line, const std::string& key,
                       const std::string& problem) {
    INFO(redis_lines);
    try {
        parse_config(with_redis(redis_lines), "test.yaml");
        FAIL("loaded without an error");
    } catch (const ConfigError& e) {
        CHECK(e.line() == line);
        CHECK(e.key() == key);
        CHECK(e.problem() == problem);
    }
}

}  // namespace

TEST_CASE("redis: sentinels and master name a Sentinel group", "[config]") {
    const auto config = parsed(
        with_redis("  sentinels: [\"10.0.0.1:26379\", \"sentinel-2:26380\", \"[::1]:26381\"]\n"
                   "  master: jobs\n  password: pw\n"));
    REQUIRE(config.redis.sentinels.size() == 3);
    CHECK(config.redis.sentinels[0].host == "10.0.0.1");
    CHECK(config.redis.sentinels[0].port == 26379);
    CHECK(config.redis.sentinels[1].host == "sentinel-2");
    CHECK(config.redis.sentinels[2].host == "::1");
    CHECK(config.redis.sentinels[2].port == 26381);
    CHECK(config.redis.master == "jobs");
    CHECK(config.redis.cluster.empty());
    CHECK(redis::describe(config.redis) ==
          "Sentinel master 'jobs' via 10.0.0.1:26379, sentinel-2:26380, ::1:26381");
    CHECK(redis::address_problem(config.redis).empty());
}

TEST_CASE("redis: cluster names seed nodes", "[config]") {
    const auto config = parsed(with_redis("  cluster:\n    - 127.0.0.1:7000\n    - node-b:7001\n"));
    REQUIRE(config.redis.cluster.size() == 2);
    CHECK(config.redis.cluster[1].host == "node-b");
    CHECK(config.redis.cluster[1].port == 7001);
    CHECK(redis::describe(config.redis) == "Cluster via 127.0.0.1:7000, node-b:7001");
}

TEST_CASE("redis: one shape at a time, every endpoint host:port", "[config]") {
    check_redis_error("  cluster: [\"a:1\"]\n  host: h\n", 9, "redis.host",
                      "host and port name a single server; leave them out with cluster");
    check_redis_error("  sentinels: [\"a:1\"]\n  master: m\n  port: 6380\n", 10, "redis.port",
                      "host and port name a single server; leave them out with sentinels");
    check_redis_error("  sentinels: [\"a:1\"]\n  master: m\n  cluster: [\"b:2\"]\n", 10,
                      "redis.cluster", "sentinels and cluster exclude each other");
    check_redis_error("  master: m\n", 8, "redis.master",
                      "needs sentinels (the Sentinel group that knows it)");
    check_redis_error("  sentinels: [\"a:1\"]\n", 8, "redis.sentinels",
                      "needs master (the name the sentinels know it by)");
    check_redis_error("  cluster: []\n", 8, "redis.cluster",
                      "must be a non-empty list of \"host:port\", got a list");
    check_redis_error("  cluster: a:1\n", 8, "redis.cluster",
                      "must be a non-empty list of \"host:port\", got 'a:1'");
    check_redis_error("  cluster: [\"a:1\", \"7001\"]\n", 8, "redis.cluster[1]",
                      "must be \"host:port\", got '7001'");
    check_redis_error("  sentinels: [\"a:0\"]\n  master: m\n", 8, "redis.sentinels[0]",
                      "must be \"host:port\", got 'a:0'");
    check_redis_error("  sentinels: [\"a:1\"]\n  master: \"\"\n", 9, "redis.master",
                      "must not be empty");
    check_redis_error("  cluster: [\"a:1\"]\n  shards: 3\n", 9, "redis.shards",
                      "unknown key (expected one of: host, port, sentinels, master, cluster, "
                      "user, password, connect_timeout)");
}

TEST_CASE("the SDK's address check says the same", "[config]") {
    RedisAddress a;
    CHECK(redis::address_problem(a).empty());
    a.master = "m";
    CHECK(redis::address_problem(a) == "redis.sentinels and redis.master go together");
    a.sentinels = {{"s", 26379}};
    CHECK(redis::address_problem(a).empty());
    a.cluster = {{"c", 7000}};
    CHECK(redis::address_problem(a) == "redis.sentinels and redis.cluster exclude each other");
    a = RedisAddress{};
    a.cluster = {{"", 7000}};
    CHECK(redis::address_problem(a) == "redis.cluster: a host is empty");
    a.cluster = {{"c", 0}};
    CHECK(redis::address_problem(a) == "redis.cluster: 0 is not a TCP port");
}
