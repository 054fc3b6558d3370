// The config's SQL fragments mean what the fragment check read, whatever the server's global
// sql_mode: the dispatcher's sessions pin it (kSessionSqlMode).

#include <catch2/catch.hpp>

#include "http_system.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;

TEST_CASE("a checked fragment means the same under NO_BACKSLASH_ESCAPES and ANSI_QUOTES",
          "[security]") {
    // Read as checked: 'a\\b' is the 3 characters a\b, "status" the 6-character string.
    // Under the server's modes: 'a\\b' would be 4 characters, "status" the column (1).
    QueueSpec queue = e2e_queue();
    queue.on_success =
        "status = :status, runs = runs + LENGTH('a\\\\b') + LENGTH(\"status\"), "
        "updated_time = NOW(3)";
    HttpSystem sys(queue, 2, {}, false);
    sys.db.exec("SET GLOBAL sql_mode = 'NO_BACKSLASH_ESCAPES,ANSI_QUOTES'");
    sys.start();
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, sys.keys().ready) == 2; }));
    std::vector<std::string> done;
    for (const auto& task : parse_ready_all(pop_ready(sys.redis, "users", 2)))
        done.push_back(task.message + " ok status=1");
    push_done(sys.redis, "users", done);
    REQUIRE(eventually(10s, [&] {
        return sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 1") == 2;
    }));
    CHECK(sys.db.scalar("SELECT MIN(runs) FROM user_block_status") == 3 + 6);
    CHECK(sys.db.scalar("SELECT MAX(runs) FROM user_block_status") == 3 + 6);
}
