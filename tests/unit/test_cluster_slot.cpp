// Redis Cluster routing: CRC16 and hash slots as the cluster spec defines them, every key of a
// queue in one slot, and the redirect and "ask again" replies.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/redis/cluster_slot.hpp"
#include "rowpump/common/redis/redis.hpp"

using namespace rowpump;
using namespace rowpump::redis;

TEST_CASE("CRC16 and hash slots match the cluster spec", "[cluster]") {
    CHECK(crc16("123456789") == 0x31C3);  // the spec's reference vector
    CHECK(crc16("") == 0);
    // Slots as `CLUSTER KEYSLOT` (Redis 7.0) gives them.
    CHECK(key_slot("foo") == 12182);
    CHECK(key_slot("bar") == 5061);
    CHECK(key_slot("users") == 14124);
    // Hash tags: the first {...} that is not empty.
    CHECK(hash_tag("{user1000}.following") == "user1000");
    CHECK(key_slot("{user1000}.following") == key_slot("{user1000}.followers"));
    CHECK(hash_tag("foo{}{bar}") == "foo{}{bar}");
    CHECK(hash_tag("foo{{bar}}zap") == "{bar");
    CHECK(hash_tag("foo{bar}{zap}") == "bar");
    CHECK(hash_tag("foo{bar") == "foo{bar");
}

TEST_CASE("every key of a queue lives in the queue's slot", "[cluster]") {
    for (const std::string& queue :
         std::vector<std::string>{"users", "q", "a.b-c_d", "0", "Z9", std::string(64, 'x')}) {
        REQUIRE(protocol::is_valid_name(queue));
        const auto k = protocol::keys_for(queue);
        const int slot = key_slot(queue);
        INFO(queue);
        for (const auto& key : {k.ready,
                                k.done,
                                k.bad,
                                k.workers,
                                k.meta,
                                k.stats,
                                k.gauges,
                                k.dispatchers,
                                k.paused,
                                k.window,
                                k.key_rate,
                                k.key_limits,
                                k.key_gauges,
                                k.leader,
                                k.epoch,
                                k.secret,
                                k.prefix,
                                k.processing("w-1"),
                                k.heartbeat("host-12-abcdef"),
                                k.processing("{other}"),
                                k.prefix + "anything"}) {
            CHECK(key_slot(key) == slot);
        }
    }
}

TEST_CASE("MOVED and ASK are parsed, other errors are not redirects", "[cluster]") {
    auto moved = parse_redirect("MOVED 3999 127.0.0.1:6381", "10.0.0.9");
    REQUIRE(moved);
    CHECK_FALSE(moved->ask);
    CHECK(moved->slot == 3999);
    CHECK(moved->node.host == "127.0.0.1");
    CHECK(moved->node.port == 6381);
    auto ask = parse_redirect("ASK 12 :7002", "10.0.0.9");  // empty host: the same node's
    REQUIRE(ask);
    CHECK(ask->ask);
    CHECK(ask->node.host == "10.0.0.9");
    CHECK(ask->node.port == 7002);
    CHECK(parse_redirect("ASK 12 [::1]:7002", "")->node.host == "[::1]");
    CHECK_FALSE(parse_redirect("MOVED x 1.2.3.4:5", ""));
    CHECK_FALSE(parse_redirect("MOVED 1 1.2.3.4:0", ""));
    CHECK_FALSE(parse_redirect("ERR unknown command", ""));

    for (const char* error :
         {"MOVED 1 a:2", "TRYAGAIN Multiple keys request during rehashing",
          "CLUSTERDOWN The cluster is down",
          "READONLY You can't write against a read only replica.",
          "MASTERDOWN Link with MASTER is down", "UNBLOCKED force unblock from blocking operation",
          "LOADING Redis is loading the dataset in memory"}) {
        CHECK(is_unavailable(error));
    }
    CHECK_FALSE(is_unavailable("ASK 1 a:2"));  // followed, not asked again
    CHECK_FALSE(is_unavailable("NOSCRIPT No matching script"));
    CHECK_FALSE(is_unavailable("WRONGTYPE Operation against a key holding the wrong kind"));
}
