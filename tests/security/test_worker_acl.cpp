// the documented worker ACL line (a queue's own) keeps a worker to its queue's protocol: no other
// queue's keys, no steering of its own queue, no reading of its token secret, no script of its
// own.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/common/protocol/scripts.hpp"
#include "rowpump/testing/readme_acl.hpp"
#include "rowpump/testing/servers.hpp"

using namespace rowpump::testing;

TEST_CASE("a worker of one queue cannot touch another queue's keys or run its own scripts",
          "[security]") {
    namespace protocol = rowpump::protocol;
    RedisServer server;
    auto admin = server.connect();
    const std::string user = "rowpump-worker-users";
    const auto line =
        readme_line(std::string(ROWPUMP_SOURCE_DIR) + "/docs/operations.md", "user " + user + " ");
    admin.command(acl_setuser(user, acl_words(line), "secret"));
    rowpump::redis::Script::load(admin, {&protocol::kCompleteScript});
    const auto own = protocol::keys_for("users");
    const auto other = protocol::keys_for("orders");
    admin.command({"RPUSH", other.ready, "1:a"});

    rowpump::RedisAddress address = server.options();
    address.user = user;
    address.password = "secret";
    auto worker = rowpump::redis::Connection::connect(address);
    const std::string complete(protocol::kCompleteScript.sha1());
    const std::vector<std::vector<std::string>> refused{
        // Another queue.
        {"RPUSH", other.done, "1:a ok"},
        {"LMOVE", other.ready, own.processing("w"), "LEFT", "RIGHT"},
        {"SADD", other.workers, "fake"},
        {"SET", other.heartbeat("w"), "w"},
        {"PUBLISH", other.nudge, "1"},
        {"EVALSHA", complete, "2", other.processing("w"), other.done, "1:a", "1:a ok"},
        {"EVALSHA", complete, "2", own.processing("w"), other.done, "1:a", "1:a ok"},
        // Its own queue's dispatcher keys: pause, stop, announce, count.
        {"SET", own.paused, "1"},
        {"SET", own.leader, "me"},
        {"DEL", own.leader},
        {"HSET", own.meta, "values", "x"},
        {"HINCRBY", own.stats, "completed", "1"},
        {"RPUSH", own.window, "garbage"},
        // The secret that signs its queue's tokens (claim: redis): with it, a made-up task
        // would pass for one a dispatcher issued.
        {"GET", own.secret},
        {"GETRANGE", own.secret, "0", "-1"},
        {"SET", own.secret, std::string(64, '0')},
        {"DEL", own.secret},
        {"EVALSHA", complete, "2", own.secret, own.done, "1:a", "1:a ok"},
        // Its own lists, other than by the protocol.
        {"DEL", own.done},
        {"SET", own.ready, "not a list"},
        // Scripts of its own.
        {"EVAL", "while true do end", "0"},
        {"SCRIPT", "LOAD", "return 1"},
        {"FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('f', function() end)"},
        {"FCALL", "f", "0"},
        // Anything else.
        {"GET", "elsewhere"},
        {"KEYS", "*"},
        {"FLUSHALL"},
    };
    for (const auto& command : refused) {
        INFO(Catch::Detail::stringify(command));
        CHECK_THROWS_WITH(worker.command(command), Catch::Contains("NOPERM"));
    }
    CHECK(admin.command({"LLEN", other.ready}).integer() == 1);
    CHECK(admin.command({"EXISTS", own.paused}).integer() == 0);
}
