// The protocol's scripts as a real Redis sees them: it names each by the SHA1 compiled in
// (cmake/EmbedLua.cmake), and redis::Script runs one after Redis lost its script cache, for
// the dispatcher as for the worker SDK (test_worker_sdk.cpp, "reports survive a SCRIPT FLUSH").

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/protocol/scripts.hpp"
#include "rowpump/dispatcher/redis/redis_queue.hpp"
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

// RedisQueue loads its scripts when it opens; each call, and the pipeline that routes reports
// to shards, still runs after a SCRIPT FLUSH (Redis restarted with its data, or a failover to a
// replica that never ran them).
TEST_CASE("protocol scripts: the dispatcher's calls run after Redis lost its scripts",
          "[protocol]") {
    testing::RedisServer server;
    auto conn = server.connect();
    QueueConfig queue;
    queue.name = "q";
    queue.shards.resize(2);
    queue.shards[0].name = "a";
    queue.shards[1].name = "b";
    queue.shard = 0;
    const auto keys = protocol::keys_for("q");
    auto rq = RedisQueue::open(server.options(), queue, "leader-a");
    const std::vector<ClaimedRow> rows{{"1", "0000000000000000-1-1"}};

    conn.command({"SCRIPT", "FLUSH"});
    CHECK(rq.lead().holder == "leader-a");
    conn.command({"SCRIPT", "FLUSH"});
    CHECK(rq.push(rows, {}).pushed);
    CHECK(conn.command({"LRANGE", keys.ready, "0", "-1"}).strings() ==
          std::vector<std::string>{"1:0000000000000000-1-1"});

    // A report in the queue's done list: take_done routes it to shard a's list and reads it.
    conn.command({"RPUSH", keys.done, "1:0000000000000000-1-1 ok status=1"});
    conn.command({"SCRIPT", "FLUSH"});
    const auto inbox = rq.take_done(10);
    REQUIRE(inbox.done.size() == 1);
    CHECK(inbox.done[0].message == "1:0000000000000000-1-1 ok status=1");
    CHECK(inbox.done[0].accepted());
    conn.command({"SCRIPT", "FLUSH"});
    CHECK(rq.ack_done(inbox.done, {}));
    CHECK(conn.command({"LLEN", keys.shard_done("a")}).integer() == 0);
    CHECK(conn.command({"LLEN", keys.done}).integer() == 0);
}

// held.lua compares tasks by their ready message's head, "<id>:<token>": a ready message with a
// payload, in the ready list or in a listed worker's processing list, and a done message, are
// each found by the head the dispatcher formats from its claim. Before payloads, whole ready
// messages were compared, and a message with fields was never found (its lease would lapse
// and the row run twice).
TEST_CASE("protocol scripts: held finds tasks by their head, fields aside", "[protocol][payload]") {
    testing::RedisServer server;
    auto conn = server.connect();
    const auto keys = protocol::keys_for("q");
    const std::string token = "0123456789ABCDEF-1-2A";
    conn.command({"RPUSH", keys.ready, "1:" + token + " page=https%3A%2F%2Fx note", "2:" + token});
    conn.command({"SADD", keys.workers, "w"});
    conn.command({"RPUSH", keys.processing("w"), "3:" + token + " page="});
    conn.command({"RPUSH", keys.done, "4:" + token + " ok status=1"});
    const std::vector<std::string> script_keys{keys.ready, keys.done, keys.workers};
    std::vector<std::string> args{keys.processing("")};
    for (const char* id : {"1", "2", "3", "4", "5"}) args.push_back(id + (":" + token));
    CHECK(protocol::kHeldScript.eval(conn, script_keys, args).strings() ==
          std::vector<std::string>{"1:" + token, "2:" + token, "3:" + token, "4:" + token});
    CHECK(protocol::kHeldScript.eval(conn, script_keys, {keys.processing("")}).strings() ==
          std::vector<std::string>{"1:" + token, "2:" + token, "3:" + token, "4:" + token});
}
