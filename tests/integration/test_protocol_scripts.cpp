// The protocol's scripts as a real Redis sees them: it names each by the SHA1 compiled in
// (cmake/EmbedLua.cmake), and redis::Script runs one after Redis lost its script cache, for
// the dispatcher as for the worker SDK (test_worker_sdk.cpp, "reports survive a SCRIPT FLUSH").

#include <algorithm>
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
          &protocol::kHeldScript, &protocol::kRouteDoneScript, &protocol::kReapToDoneScript,
          &protocol::kKeyLimitsScript}) {
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

// rate_per_key in push.lua (docs/fairness.md): a key whose window is full refuses the whole
// push; the state stays bounded (at most 16 entries per key, merged, never fewer rows), a key
// whose entries all left is dropped by later pushes, the hash expires after the longest
// period, and entries or a key of a form push.lua never writes are skipped or replaced.
TEST_CASE("protocol scripts: push.lua keeps each key's window bounded, strict and expiring",
          "[protocol][key_limits]") {
    testing::RedisServer server;
    auto conn = server.connect();
    QueueConfig queue;
    queue.name = "q";
    const auto keys = protocol::keys_for("q");
    auto rq = RedisQueue::open(server.options(), queue, "leader-a");
    REQUIRE(rq.lead().holder == "leader-a");
    const Rate per_minute{100, Millis(60000)};
    auto row = [](int i) {
        return ClaimedRow{std::to_string(i), "0000000000000000-1-" + std::to_string(i)};
    };

    // 20 pushes of one row of key "a": 16 entries at most, 20 rows counted all the same.
    for (int i = 1; i <= 20; ++i) {
        const auto window = rq.push({row(i)}, {{"=a", per_minute, 1}});
        REQUIRE(window.pushed);
        REQUIRE(window.keys.size() == 1);
        CHECK(window.keys[0].rows_left == 100 - i);
    }
    const auto value = conn.command({"HGET", keys.key_rate, "=a"}).string();
    CHECK(std::count(value.begin(), value.end(), ',') == 15);  // 16 entries
    const auto pttl = conn.command({"PTTL", keys.key_rate}).integer();
    CHECK(pttl > 59000);
    CHECK(pttl <= 60001);

    // Key "b" at 2/1s: two rows go, a third is refused with the rows of "a" in the same push.
    const Rate two{2, Millis(1000)};
    auto window = rq.push({row(21), row(22)}, {{"=b", two, 2}});
    REQUIRE(window.pushed);
    CHECK(window.keys[0].rows_left == 0);
    CHECK(window.keys[0].wait.count() > 0);
    CHECK(window.keys[0].wait.count() <= 1000000);
    window = rq.push({row(23), row(24)}, {{"=a", per_minute, 1}, {"=b", two, 1}});
    CHECK(!window.pushed);
    REQUIRE(window.keys.size() == 2);
    CHECK(window.keys[0].rows_left == 80);
    CHECK(window.keys[1].rows_left == 0);
    CHECK(conn.command({"LLEN", keys.ready}).integer() == 22);
    // Only a read: nothing written.
    window = rq.push({}, {{"=b", two, 0}});
    CHECK(window.pushed);
    CHECK(window.keys[0].rows_left == 0);

    // Entries that left, and values push.lua never writes: skipped, and the field dropped by a
    // later push's look at a few random fields.
    conn.command({"HSET", keys.key_rate, "=old", "5:3", "=junk", "not an entry", "=c",
                  "99999999999999999999:1"});
    window = rq.push({row(25)}, {{"=c", per_minute, 1}});
    CHECK(window.pushed);
    CHECK(window.keys[0].rows_left == 99);  // the junk entry counted nothing
    auto left = [&](const char* field) {
        return conn.command({"HEXISTS", keys.key_rate, field}).integer() == 1;
    };
    for (int i = 0; i < 20 && (left("=old") || left("=junk")); ++i)
        rq.push({row(26 + i)}, {{"=d", per_minute, 1}});
    CHECK(conn.command({"HEXISTS", keys.key_rate, "=old"}).integer() == 0);
    CHECK(conn.command({"HEXISTS", keys.key_rate, "=junk"}).integer() == 0);
    CHECK(conn.command({"HEXISTS", keys.key_rate, "=a"}).integer() == 1);

    // A key_rate of another type is replaced.
    conn.command({"SET", keys.key_rate, "oops"});
    window = rq.push({row(50)}, {{"=a", per_minute, 1}});
    CHECK(window.pushed);
    CHECK(conn.command({"TYPE", keys.key_rate}).string() == "hash");
}
