// The protocol's scripts as a real Redis sees them: it names each by the SHA1 compiled in
// (cmake/EmbedLua.cmake), and redis::Script runs one after Redis lost its script cache.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/common/protocol/scripts.hpp"
#include "rowpump/testing/servers.hpp"

using namespace rowpump;

TEST_CASE("protocol scripts: Redis names each script by the SHA1 compiled in", "[protocol]") {
    testing::RedisServer server;
    auto conn = server.connect();
    for (const auto* script :
         {&protocol::kCompleteScript, &protocol::kTakeScript, &protocol::kLeaveScript,
          &protocol::kGiveBackScript, &protocol::kLeadScript, &protocol::kResignScript,
          &protocol::kPushScript, &protocol::kAckDoneScript, &protocol::kReapScript,
          &protocol::kHeldScript, &protocol::kRouteDoneScript, &protocol::kReapToDoneScript}) {
        INFO(script->text());
        CHECK(conn.command({"SCRIPT", "LOAD", std::string(script->text())}).string() ==
              script->sha1());
    }
    CHECK_NOTHROW(redis::Script::load(conn, {&protocol::kCompleteScript, &protocol::kTakeScript}));
}

TEST_CASE("protocol scripts: eval runs a script Redis does not know, then by its SHA1",
          "[protocol]") {
    testing::RedisServer server;
    auto conn = server.connect();
    conn.command({"RPUSH", "rowpump:{q}:ready", "a", "b", "c"});
    const std::vector<std::string> keys{"rowpump:{q}:ready", "rowpump:{q}:processing:w"};

    conn.command({"SCRIPT", "FLUSH"});
    conn.command({"CONFIG", "RESETSTAT"});
    CHECK(protocol::kTakeScript.eval(conn, keys, {"2"}).strings() ==
          std::vector<std::string>{"a", "b"});
    CHECK(protocol::kTakeScript.eval(conn, keys, {"2"}).strings() == std::vector<std::string>{"c"});
    const auto stats = conn.command({"INFO", "commandstats"}).string();
    INFO(stats);
    // The first EVALSHA found nothing and EVAL cached the script; the second EVALSHA ran it.
    CHECK(stats.find("cmdstat_evalsha:calls=2,") != std::string::npos);
    CHECK(stats.find("cmdstat_eval:calls=1,") != std::string::npos);
    CHECK(conn.command({"LRANGE", keys[1], "0", "-1"}).strings() ==
          std::vector<std::string>{"a", "b", "c"});

    // Any other error is the caller's: no EVAL behind it.
    conn.command({"SET", keys[0], "not a list"});
    CHECK_THROWS_AS(protocol::kTakeScript.eval(conn, keys, {"1"}), redis::ReplyError);
}
