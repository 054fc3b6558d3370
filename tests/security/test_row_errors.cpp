// A worker's value that makes the outcome statement fail, with any error its row causes,
// isolates that row: the rest of the batch is applied, and the batch is not tried again and
// again.

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;

TEST_CASE("a value that makes on_success fail with error 1139 isolates its rows, not the batch",
          "[security]") {
    constexpr std::size_t kRows = 30;
    constexpr std::size_t kBad = 20;  // one statement for rows with equal values: 16 or more
    QueueSpec queue = e2e_queue();
    queue.claim = "redis";
    queue.on_success =
        "status = IF('abc' REGEXP :pattern, :status, :status), runs = runs + 1, "
        "updated_time = NOW(3)";
    E2eSystem sys(queue, kRows);
    const auto keys = sys.keys();
    const std::string hand = keys.prefix + "processing:by-hand";
    std::vector<std::string> taken;
    REQUIRE(eventually(10s, [&] {
        auto message =
            sys.redis.command({"LMOVE", keys.ready, hand, "LEFT", "RIGHT"}).optional_string();
        if (message) taken.push_back(*message);
        return taken.size() == kRows;
    }));
    // One batch. Rows of one claim with equal values are updated by one statement in which the
    // pattern is a constant: "(" is not a regular expression, and MariaDB fails it with error
    // 1139 (read per row from a joined table, the pattern gives NULL). Before, that failed
    // the whole batch, every cycle, and no row of it was applied.
    std::vector<std::string> push{"RPUSH", keys.done};
    for (std::size_t i = 0; i < taken.size(); ++i) {
        push.push_back(taken[i] + " ok status=1 pattern=" + (i < kBad ? "%28" : "a"));
    }
    sys.redis.command(push);

    const bool applied = eventually(30s, [&] { return sys.rows_left() == 0; });
    INFO(sys.table_summary() << "; " << sys.dispatcher->log_tail());
    REQUIRE(applied);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(list_length(sys.redis, keys.bad) == 0);
    CHECK(sys.dispatcher->running());
}
