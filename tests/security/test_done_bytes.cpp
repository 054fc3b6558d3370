// What a worker writes to the done list is bounded in bytes before the dispatcher reads it:
// huge messages are set aside in Redis, never read into the dispatcher's memory, and the queue
// keeps flowing.

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <string>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/protocol_worker.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;

namespace {

// The peak resident set of `pid` in KiB (VmHWM in /proc/<pid>/status).
std::int64_t peak_rss_kib(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
    }
    return -1;
}

}  // namespace

TEST_CASE("16 done messages of 8 MiB are set aside unread while rows keep flowing", "[security]") {
    constexpr std::int64_t kRows = 300;
    constexpr int kHuge = 16;
    // The dispatcher's peak resident set. Before, one LRANGE read all 16 (128 MiB) at once,
    // and sent them back to the bad list in one call: well over 256 MiB.
    constexpr std::int64_t kBoundKib = 96 * 1024;
    E2eSystem sys(e2e_queue(), kRows);
    const auto keys = sys.keys();
    ProtocolWorkerOptions options;
    options.redis = sys.bed.redis.options();
    options.worker_id = "plain";
    ProtocolWorker worker(options);
    REQUIRE(eventually(30s, [&] { return sys.rows_left() < kRows; }));

    const std::string huge(8 * 1024 * 1024, 'x');
    for (int i = 0; i < kHuge; ++i) {
        sys.redis.command({"RPUSH", keys.done, std::to_string(i) + huge});
    }
    insert_e2e_rows(sys.db, kRows + 1, kRows);

    const bool flowed = eventually(
        60s, [&] { return sys.rows_left() == 0 && list_length(sys.redis, keys.bad) == kHuge; });
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    INFO(sys.dispatcher->log_tail());
    CHECK(flowed);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(list_length(sys.redis, keys.bad) == kHuge);
    CHECK(sys.dispatcher->running());
    const auto peak = peak_rss_kib(sys.dispatcher->process().pid());
    INFO("dispatcher VmHWM " << peak << " KiB");
    CHECK(peak > 0);
    CHECK(peak < kBoundKib);
    CHECK(sys.dispatcher->log_count("longer than 65536 bytes") >= 1);
}
