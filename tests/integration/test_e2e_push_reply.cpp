// End to end, a push whose reply is lost: Redis ran the push script, then the connection
// broke before its reply reached the dispatcher. The tasks sit in the ready list; the
// dispatcher must find that out instead of guessing, and never push them a second time.
// Checked on the test worker's ledger (--log): every row run exactly once.

#include <chrono>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/reply_cut_proxy.hpp"

using namespace rowpump::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t kRows = 30;
constexpr int kBatch = 10;
// A rate far above what the test reaches, only so that the push script's reply carries a
// number of its own: the rows the window takes after the first push, 1000000 - kBatch.
constexpr const char* kRate = "1000000/1s";
constexpr const char* kFirstPushReply = "\r\n999990\r\n";

void lost_push_reply_is_not_pushed_twice(const std::string& claim) {
    TestBed bed;
    MysqlClient db = bed.db();
    create_e2e_table(db);
    insert_e2e_rows(db, 1, kRows);

    QueueSpec queue = e2e_queue();
    queue.claim = claim;
    queue.batch = kBatch;
    queue.rate = kRate;
    queue.lease = "60s";  // longer than the test: a claim kept by mistake would show
    ReplyCutProxy proxy(bed.redis.port(), kFirstPushReply);
    ConfigSpec spec = bed.config_spec({queue});
    spec.redis_port = proxy.port();
    const std::string config = write_config(bed.dir.file("rowpump.yaml"), spec);
    migrate_apply(config);
    auto dispatcher = bed.start_dispatcher(config);
    REQUIRE(eventually(20s, [&] { return proxy.cut(); }));

    TestWorkerSpec worker_spec;
    worker_spec.worker_id = "w1";
    worker_spec.threads = 2;
    TestWorkerProcess worker(ROWPUMP_TEST_WORKER, bed.redis.port(), bed.dir, worker_spec);
    auto rows_left = [&] {
        return db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 0");
    };
    const bool done = eventually(
        40s, [&] { return rows_left() == 0; }, 50ms);
    // A second copy of a task would still be waiting or running: let every list drain first.
    auto redis = bed.redis_client();
    const auto keys = rowpump::protocol::keys_for(queue.name);
    const bool drained = eventually(10s, [&] {
        return list_length(redis, keys.ready) == 0 && list_length(redis, keys.done) == 0 &&
               list_length(redis, worker.processing_key()) == 0;
    });

    std::map<std::string, int> runs;
    for (const auto& task : worker.handled()) ++runs[task.id];
    std::int64_t run_twice = 0;
    std::ostringstream twice;
    for (const auto& [id, count] : runs) {
        if (count > 1) {
            ++run_twice;
            twice << id << " ";
        }
    }
    INFO("claim: " << claim << "; rows run more than once: " << run_twice << " (" << twice.str()
                   << "); rows run: " << runs.size() << "\n"
                   << dispatcher->log_tail());
    REQUIRE(done);
    CHECK(drained);
    CHECK(run_twice == 0);
    CHECK(static_cast<std::int64_t>(runs.size()) == kRows);
    CHECK(db.scalar("SELECT COUNT(*) FROM user_block_status WHERE runs <> 1") == 0);
    CHECK(db.scalar(std::string("SELECT COUNT(*) FROM user_block_status WHERE ") + kClaimedSql) ==
          0);
    // The reply cut was a push's, and the dispatcher saw its outcome as unknown.
    CHECK(dispatcher->log_count("rows failed once sent") == 1);
    if (claim == "mysql")
        CHECK(dispatcher->log_count(": 1 landed (10 claims kept), 0 did not") == 1);
}

}  // namespace

TEST_CASE("e2e: a push whose reply is lost is not pushed twice (claim: mysql)", "[e2e]") {
    lost_push_reply_is_not_pushed_twice("mysql");
}

TEST_CASE("e2e: a push whose reply is lost is not pushed twice (claim: redis)", "[e2e]") {
    lost_push_reply_is_not_pushed_twice("redis");
}
