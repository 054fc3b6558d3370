// The dispatcher survives any content in the Redis keys it reads: a key of the wrong type or
// holding garbage is logged (escaped) and the queue goes on.

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/protocol_worker.hpp"
#include "rowpump/testing/queue_redis.hpp"

using namespace rowpump::testing;

TEST_CASE("garbage in a rate-limited queue's push window does not stop the queue", "[security]") {
    constexpr std::int64_t kRows = 100;
    QueueSpec queue = e2e_queue();
    queue.rate = "50/100ms";
    E2eSystem sys(queue, kRows);
    const auto keys = sys.keys();
    ProtocolWorkerOptions options;
    options.redis = sys.bed.redis.options();
    options.worker_id = "plain";
    ProtocolWorker worker(options);
    REQUIRE(eventually(30s, [&] { return sys.rows_left() < kRows; }));

    // Entries push.lua never writes; before, the first made the script throw on every push.
    sys.redis.command({"RPUSH", keys.window, "garbage", "", ":", "12:", "x:1", "1e3:5",
                       "99999999999999999999:1", "1:99999999999999999999", "-5:1", "5:-1"});
    insert_e2e_rows(sys.db, kRows + 1, kRows);
    bool done = eventually(60s, [&] { return sys.rows_left() == 0; });
    INFO(sys.table_summary() << "; " << sys.dispatcher->log_tail());
    REQUIRE(done);

    // A window key of another type.
    sys.redis.command({"DEL", keys.window});
    sys.redis.command({"SET", keys.window, "not a list"});
    insert_e2e_rows(sys.db, 2 * kRows + 1, kRows);
    done = eventually(60s, [&] { return sys.rows_left() == 0; });
    INFO(sys.table_summary() << "; " << sys.dispatcher->log_tail());
    REQUIRE(done);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(sys.dispatcher->running());
}

TEST_CASE("keys of the wrong type or with garbage do not stop the queue", "[security]") {
    constexpr std::int64_t kRows = 100;
    QueueSpec queue = e2e_queue();
    queue.extra_lines = {"reap_interval: 100ms"};
    E2eSystem sys(queue, kRows);
    const auto keys = sys.keys();
    ProtocolWorkerOptions options;
    options.redis = sys.bed.redis.options();
    options.worker_id = "plain";
    ProtocolWorker worker(options);
    REQUIRE(eventually(30s, [&] { return sys.rows_left() < kRows; }));

    // A leader lock taken by someone else, whose id is logged escaped; then one no dispatcher
    // wrote (no expiry): before, the dispatcher stood by for ever.
    sys.redis.command({"SET", keys.leader, "intruder\n<0>forged", "PX", "2500"});
    REQUIRE(
        eventually(10s, [&] { return sys.dispatcher->log_count("intruder\\n<0>forged") >= 1; }));
    sys.redis.command({"SET", keys.leader, "intruder"});
    // A listed worker without a heartbeat whose processing key is not a list, and workers of
    // names no key can hold.
    sys.redis.command({"SADD", keys.workers, "ghost", "\x1b]0;title\x07", ""});
    sys.redis.command({"SET", keys.processing("ghost"), "not a list"});
    sys.redis.command({"HSET", keys.processing("\x1b]0;title\x07"), "a", "b"});
    insert_e2e_rows(sys.db, kRows + 1, kRows);
    bool done = eventually(60s, [&] { return sys.rows_left() == 0; });
    INFO(sys.table_summary() << "; " << sys.dispatcher->log_tail());
    REQUIRE(done);

    // A workers key that is not a set.
    sys.redis.command({"DEL", keys.workers});
    sys.redis.command({"RPUSH", keys.workers, "not a set"});
    insert_e2e_rows(sys.db, 2 * kRows + 1, kRows);
    done = eventually(60s, [&] { return sys.rows_left() == 0; });
    INFO(sys.table_summary() << "; " << sys.dispatcher->log_tail());
    REQUIRE(done);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(sys.dispatcher->running());
    CHECK(sys.dispatcher->log_count("\n<0>") == 0);
}
