// End to end, messages that cannot hurt: a done or ready message cannot forge log lines or
// flood the log (dispatcher and SDK), a reason that is not valid UTF-8 is stored with
// replacement characters instead of refusing the outcome, and a worker cannot park a row for
// a century with a huge retry delay.

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/e2e_worker.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;
using Catch::Matchers::Contains;

namespace {

const std::string kForged =
    "\n[2024-01-01 00:00:00.000] [info] queue users: FORGED took the leader lock\x1B[2J\x01\x7F";
constexpr std::size_t kHuge = 3 * 1024 * 1024;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

bool has_control_byte(const std::string& line) {
    return std::any_of(line.begin(), line.end(), [](char c) {
        const auto b = static_cast<unsigned char>(c);
        return (b < 0x20 && b != '\t') || b == 0x7F;
    });
}

// Takes one task from the ready list by hand, as a plain Redis client would.
rowpump::Task take_by_hand(E2eSystem& sys) {
    const auto keys = sys.keys();
    std::optional<std::string> taken;
    REQUIRE(eventually(10s, [&] {
        taken =
            sys.redis
                .command({"LMOVE", keys.ready, keys.prefix + "processing:by-hand", "LEFT", "RIGHT"})
                .optional_string();
        return taken.has_value();
    }));
    std::string error;
    auto task = rowpump::protocol::parse_ready(*taken, error);
    REQUIRE(task);
    return *task;
}

std::string row_value(E2eSystem& sys, const std::string& column, const std::string& id) {
    return sys.db
        .scalar_string("SELECT " + column + " FROM user_block_status WHERE user_id = " + id)
        .value_or("NULL");
}

}  // namespace

TEST_CASE(
    "e2e: a done message cannot forge dispatcher log lines, and a huge one is set aside unread",
    "[e2e]") {
    E2eSystem sys(e2e_queue(), 1);
    const auto task = take_by_hand(sys);
    const std::string forging = task.message + " ok status=1" + kForged;
    // Over protocol::kMaxMessageBytes: take_done.lua moves it to the bad list in Redis, so the
    // dispatcher never reads it and logs only a count.
    const std::string huge = forging + std::string(kHuge, 'x');
    sys.redis.command({"RPUSH", sys.keys().done, forging});
    sys.redis.command({"RPUSH", sys.keys().done, huge});
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, sys.keys().bad) == 2; }));
    auto bad = list_all(sys.redis, sys.keys().bad);  // set aside verbatim
    std::sort(bad.begin(), bad.end());
    auto sent = std::vector<std::string>{forging, huge};
    std::sort(sent.begin(), sent.end());
    CHECK(bad == sent);

    const auto lines = lines_of(sys.dispatcher->log());
    INFO(sys.dispatcher->log_tail());
    std::vector<std::string> forged;
    std::size_t unread = 0;
    for (const auto& line : lines) {
        CHECK_FALSE(has_control_byte(line));
        CHECK(line.size() < 600);
        if (line.find("FORGED") != std::string::npos) forged.push_back(line);
        if (line.find("longer than 65536 bytes moved to") != std::string::npos) ++unread;
    }
    REQUIRE(forged.size() == 1);
    CHECK_THAT(forged[0], Contains("moved 1 refused done messages"));
    CHECK_THAT(forged[0], Contains(" ok status=1\\n[2024-01-01 00:00:00.000] [info] queue users: "
                                   "FORGED took the leader lock\\x1B[2J\\x01\\x7F"));
    CHECK(unread == 1);
    CHECK(sys.dispatcher->running());
}

TEST_CASE("e2e: the SDK logs a malformed ready message as one short escaped line", "[e2e]") {
    E2eSystem sys(e2e_queue(), 0);
    // No ':' token at the end: the whole 3 MB is the id, which the error quotes.
    const std::string message = "id" + kForged + std::string(kHuge, 'y') + ":not-a-token";
    sys.redis.command({"RPUSH", sys.keys().ready, message});

    std::vector<std::string> logged;
    std::mutex mutex;
    auto options = e2e_worker_options(sys, "sdk");
    options.log = [&](const std::string& line) {
        std::lock_guard<std::mutex> lock(mutex);
        logged.push_back(line);
    };
    rowpump::Worker worker(options);
    CHECK_FALSE(worker.fetch(1000ms).has_value());
    CHECK(worker.bad_messages() == 1);
    CHECK(list_all(sys.redis, sys.keys().bad) == std::vector<std::string>{message});

    std::lock_guard<std::mutex> lock(mutex);
    REQUIRE(logged.size() == 1);
    const std::string& line = logged[0];
    INFO(line.substr(0, 2000));
    CHECK_THAT(line, Contains("malformed ready message 'id\\n[2024-01-01 00:00:00.000] [info] "
                              "queue users: FORGED took the leader lock\\x1B[2J\\x01\\x7Fyyy"));
    CHECK_THAT(line, Contains("... (" + std::to_string(message.size()) + " bytes)"));
    CHECK_FALSE(has_control_byte(line));
    CHECK(line.size() < 1000);
}

TEST_CASE("e2e: a reason that is not valid UTF-8 is stored with replacement characters", "[e2e]") {
    // The lease is long: if the outcome were refused the rows would wait it out.
    E2eSystem sys(e2e_queue(), 2);
    const auto retried = take_by_hand(sys);
    const auto failed = take_by_hand(sys);
    sys.redis.command({"RPUSH", sys.keys().done, retried.message + " retry reason=bad%FF%FEbytes"});
    sys.redis.command({"RPUSH", sys.keys().done, failed.message + " fail reason=cut%C3"});

    const std::string replacement = "\xEF\xBF\xBD";
    const bool applied = eventually(10s, [&] {
        return sys.db.scalar(
                   "SELECT COUNT(*) FROM user_block_status WHERE rp_last_error IS NOT "
                   "NULL") == 2;
    });
    INFO(sys.dispatcher->log_tail() << "\n" << sys.table_summary());
    REQUIRE(applied);
    CHECK(row_value(sys, "rp_last_error", retried.id) ==
          "bad" + replacement + replacement + "bytes");
    CHECK(row_value(sys, "rp_attempts", retried.id) == "1");
    CHECK(row_value(sys, "rp_last_error", failed.id) == "cut" + replacement);
    CHECK(row_value(sys, "rp_dead_at IS NOT NULL", failed.id) == "1");
    CHECK(list_length(sys.redis, sys.keys().bad) == 0);
}

TEST_CASE("e2e: a worker's retry delay is capped at retry.cap by default", "[e2e]") {
    E2eSystem sys(e2e_queue(), 1);  // retry.cap: 5m, the default
    const auto task = take_by_hand(sys);
    sys.redis.command({"RPUSH", sys.keys().done, task.message + " retry delay=1000000h"});

    const std::string wait_seconds =
        "SELECT TIMESTAMPDIFF(SECOND, NOW(3), rp_lease_until) FROM user_block_status WHERE "
        "user_id = " +
        task.id + " AND rp_attempts = 1";
    std::optional<std::int64_t> waits;
    const bool applied = eventually(10s, [&] {
        const auto rows = sys.db.rows(wait_seconds);
        if (rows.empty() || !rows[0][0]) return false;
        waits = std::stoll(*rows[0][0]);
        return true;
    });
    INFO(sys.dispatcher->log_tail() << "\n" << sys.table_summary());
    REQUIRE(applied);
    CHECK(*waits <= 300);
    CHECK(*waits >= 290);
}
