// rowpump status (table and --json), pause and resume from the shell, and exit code 2 for
// a missing subcommand or a bad argument.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "http_system.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;
using nlohmann::json;

TEST_CASE("status --json and the table show the leader's count, latency and leader", "[status]") {
    HttpSystem sys(queue_with_latency(), 50, fast_due_count());

    // No dispatcher yet: status counts itself.
    auto alone = rowpump_cli({"status", "-c", sys.config, "--json"});
    INFO(alone.describe());
    REQUIRE(alone.status.success());
    auto o = json::parse(alone.out);
    CHECK(o["due"] == 50);
    CHECK(o["due_counted_by"] == "status");
    CHECK(o["leader"] == nullptr);

    REQUIRE(rowpump_cli({"pause", "-c", sys.config, "users"}).status.success());
    sys.start();
    REQUIRE(eventually(15s, [&] {
        o = json::parse(rowpump_cli({"status", "-c", sys.config, "--json"}).out);
        return o["leader"].is_string() && o["due_counted_by"] == o["leader"];
    }));
    CHECK(o["queue"] == "users");
    CHECK(o["due"] == 50);
    CHECK(o["due_capped"] == false);
    CHECK(o["paused"] == true);
    CHECK(o["oldest_due_age_seconds"].get<double>() >= 3600);
    CHECK(o["ready"] == 0);
    CHECK(o["counters"]["dispatched"] == 0);
    CHECK(o["dispatched_per_second"] == nullptr);  // one look: no rate yet

    auto table = rowpump_cli({"status", "-c", sys.config});
    INFO(table.describe());
    CHECK(contains(table.out, " oldest leader\n"));
    CHECK(contains(table.out, o["leader"].get<std::string>() + " (paused)"));
    CHECK(contains(table.out, " 1h "));  // the oldest due age, rounded to seconds

    auto resumed = rowpump_cli({"resume", "-c", sys.config, "users"});
    CHECK(resumed.out == "queue users: resumed\n");
    CHECK(eventually(10s, [&] { return list_length(sys.redis, sys.keys().ready) == 50; }));
    CHECK(rowpump_cli({"resume", "-c", sys.config, "users"}).out ==
          "queue users: was not paused\n");
    CHECK(rowpump_cli({"pause", "-c", sys.config, "nope"}).status.code() == 1);
}

TEST_CASE("a missing subcommand or a bad argument exits 2", "[status]") {
    TestBed bed;
    const auto config = bed.write_config();
    for (const auto& args :
         std::vector<std::vector<std::string>>{{},
                                               {"frobnicate"},
                                               {"status"},
                                               {"status", "-c", config, "--count", "x"},
                                               {"status", "-c", config, "--watch", "soon"},
                                               {"pause", "-c", config},
                                               {"dead", "-c", config, "users", "--limit", "0"}}) {
        auto r = rowpump_cli(args);
        INFO(r.describe());
        CHECK(r.status.code() == 2);
    }
    CHECK(rowpump_cli({"--help"}).status.code() == 0);
}
