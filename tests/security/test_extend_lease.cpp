// An `extend` asks for a lease from now; one past the queue's max_lease (default 24h) is cut
// to it, so a worker cannot hold a row for centuries.

#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;

TEST_CASE("an extend past max_lease is cut to it", "[security]") {
    E2eSystem sys(e2e_queue(), 1);
    const auto keys = sys.keys();
    const std::string hand = keys.prefix + "processing:by-hand";
    std::optional<std::string> taken;
    REQUIRE(eventually(10s, [&] {
        taken = sys.redis.command({"LMOVE", keys.ready, hand, "LEFT", "RIGHT"}).optional_string();
        return taken.has_value();
    }));
    // About 253 years; before, the row's lease ended then.
    sys.redis.command({"RPUSH", keys.done, *taken + " extend lease=8000000000000ms"});
    const std::string hours_left =
        "SELECT TIMESTAMPDIFF(HOUR, NOW(3), rp_lease_until) FROM user_block_status";
    const bool extended = eventually(10s, [&] { return sys.db.scalar(hours_left) > 1; });
    INFO(sys.dispatcher->log_tail());
    REQUIRE(extended);
    CHECK(sys.db.scalar(hours_left) <= 24);
    CHECK(sys.db.scalar(hours_left) >= 23);
    CHECK(sys.dispatcher->log_count("asked for a lease over max_lease 24h") == 1);
    CHECK(list_length(sys.redis, keys.bad) == 0);
}
