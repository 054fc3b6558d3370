// What a person reads in a terminal cannot be forged: `rowpump dead` and `rowpump status`
// escape control characters from workers and Redis; `status --json` stays exact.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "http_system.hpp"
#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/common/protocol/queue_gauges.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;
using nlohmann::json;

namespace {

bool has_control(const std::string& text) {
    for (const unsigned char c : text) {
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return true;
    }
    return false;
}

std::size_t count_of(const std::string& text, char c) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), c));
}

}  // namespace

TEST_CASE("rowpump dead escapes a worker's reason: no terminal escapes, no forged rows",
          "[security]") {
    HttpSystem sys(e2e_queue(), 1, {}, false);
    sys.start();
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, sys.keys().ready) == 1; }));
    const auto tasks = parse_ready_all(pop_ready(sys.redis, "users", 1));
    REQUIRE(tasks.size() == 1);
    // OSC 0 (window title), a colour, then a tab and a newline that would make a second row.
    push_done(
        sys.redis, "users",
        {tasks[0].message + " fail reason=%1B%5D0%3Bpwned%07%1B%5B31mred%09x%0A999%091%09forged"});
    REQUIRE(eventually(10s, [&] {
        return sys.db.scalar(
                   "SELECT COUNT(*) FROM user_block_status WHERE rp_dead_at IS NOT NULL") == 1;
    }));
    const auto dead = rowpump_cli({"dead", "-c", sys.config, "users"});
    INFO(dead.describe());
    REQUIRE(dead.status.success());
    CHECK_FALSE(has_control(dead.out));
    CHECK(count_of(dead.out, '\n') == 2);  // the header and one row
    CHECK(count_of(dead.out, '\t') == 2 * 3);
    CHECK(contains(dead.out, "\\x1B]0;pwned\\x07\\x1B[31mred\\tx\\n999\\t1\\tforged"));
}

TEST_CASE("rowpump status escapes the leader id from Redis, --json keeps it exact", "[security]") {
    HttpSystem sys(e2e_queue(), 0, {}, false);
    const std::string evil = "host\x1B]0;pwned\x07\nforged 1 2 3";
    // What a dispatcher writes when it leads, under an id of the attacker's choosing.
    sys.redis.command(
        {"HSET", sys.keys().dispatchers, evil,
         rowpump::protocol::format_dispatcher_entry("leader", rowpump::protocol::unix_ms())});
    const auto table = rowpump_cli({"status", "-c", sys.config});
    INFO(table.describe());
    REQUIRE(table.status.success());
    CHECK_FALSE(has_control(table.out));
    CHECK(count_of(table.out, '\n') == 2);
    CHECK(contains(table.out, "host\\x1B]0;pwned\\x07\\nforged 1 2 3"));
    const auto as_json = rowpump_cli({"status", "-c", sys.config, "--json"});
    REQUIRE(as_json.status.success());
    CHECK(json::parse(as_json.out)["leader"] == evil);
}
