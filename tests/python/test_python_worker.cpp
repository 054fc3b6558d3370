// End to end with the Python worker SDK: worker-sdk/python/conformance_worker.py, run with
// Debian's python3, against a real dispatcher, MariaDB and Redis. One system, one phase
// after another, each with rows of its own and one worker at a time: every row done exactly
// once (the `runs` column counts on_success), a retry then a success, a lease extended by a
// task in hand, a fail that leaves the row dead, a hung handler cut off by its deadline, a
// SIGKILLed worker's tasks taken back and done by the next one, a SIGTERM that lets the
// tasks in hand finish, and a task given back after its fetch's reply was lost. Twice: with
// rowpump.Worker (threads) and rowpump.AsyncWorker (asyncio).

#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/reply_cut_proxy.hpp"

using namespace rowpump::testing;

namespace {

const std::string kWorkerScript = std::string(ROWPUMP_PYTHON_SDK) + "/conformance_worker.py";

// conformance_worker.py as a child process, its task log and output in the system's
// scratch directory.
class PythonWorker {
public:
    PythonWorker(E2eSystem& sys, const std::string& mode, std::string id,
                 std::vector<std::string> flags)
        : sys_(sys),
          id_(std::move(id)),
          log_(sys.bed.dir.file(id_ + ".tasks")),
          output_(sys.bed.dir.file(id_ + ".out")) {
        std::vector<std::string> argv{ROWPUMP_PYTHON3, kWorkerScript,
                                      "--redis-host",  "127.0.0.1",
                                      "--redis-port",  std::to_string(sys.bed.redis.port()),
                                      "--queue",       "users",
                                      "--worker-id",   id_,
                                      "--log",         log_,
                                      "--value",       "status=1",
                                      "--mode",        mode};
        argv.insert(argv.end(), flags.begin(), flags.end());
        SpawnOptions options;
        options.stdout_path = output_;
        options.env = {{"PYTHONPATH", ROWPUMP_PYTHON_SDK}, {"PYTHONDONTWRITEBYTECODE", "1"}};
        process_ = std::make_unique<ChildProcess>(argv, options);
    }

    ChildProcess& process() { return *process_; }
    std::vector<HandledTask> handled() const { return read_task_log(log_); }
    std::string output() const { return read_file(output_); }
    std::string processing_key() const { return sys_.keys().processing(id_); }
    std::int64_t in_hand() { return list_length(sys_.redis, processing_key()); }

    // The worker ends on its own (--max-tasks) or after SIGTERM: exit 0, nothing left
    // behind in Redis.
    void expect_clean_exit() {
        auto status = process_->wait(15s);
        INFO(id_ << " output:\n" << output());
        REQUIRE(status);
        CHECK(status->describe() == "exit code 0");
        CHECK(in_hand() == 0);
        CHECK(sys_.redis.command({"EXISTS", sys_.keys().heartbeat(id_)}).integer() == 0);
        CHECK(sys_.redis.command({"SISMEMBER", sys_.keys().workers, id_}).integer() == 0);
    }

private:
    E2eSystem& sys_;
    std::string id_;
    std::string log_;
    std::string output_;
    std::unique_ptr<ChildProcess> process_;
};

std::string row_sql(E2eSystem& sys, const std::string& column, std::int64_t id) {
    return sys.db
        .scalar_string("SELECT " + column +
                       " FROM user_block_status WHERE user_id = " + std::to_string(id))
        .value_or("NULL");
}

std::int64_t count_rows(E2eSystem& sys, const std::string& where) {
    return sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE " + where);
}

std::map<std::string, int> times_handled(const std::vector<HandledTask>& tasks) {
    std::map<std::string, int> count;
    for (const auto& t : tasks) ++count[t.id];
    return count;
}

}  // namespace

TEST_CASE(
    "e2e: the Python SDK's conformance worker: exactly once, retry, extend, fail, deadline, "
    "SIGKILL take-back, SIGTERM drain, lost reply",
    "[e2e][python]") {
    const std::string mode = GENERATE(as<std::string>{}, "thread", "async");
    INFO("--mode " << mode);
    QueueSpec queue = e2e_queue();
    queue.batch = 50;
    queue.lease = "5m";  // a task the worker lost would hold its row past every deadline here
    queue.on_dead = "status = 3";
    queue.extra_lines = {"retry: { base: 100ms, cap: 1s, max_attempts: 20 }"};
    E2eSystem sys(queue, 200);

    {
        // 200 rows, 4 threads, adaptive batch: each row done once, each task handled once.
        {
            PythonWorker bulk(sys, mode, "py-bulk", {"--threads", "4"});
            REQUIRE(eventually(
                45s, [&] { return sys.rows_left() == 0; }, 50ms));
            REQUIRE(eventually(10s,
                               [&] { return queue_stat(sys.redis, "users", "completed") == 200; }));
            CHECK(sys.rows_not_run_once() == 0);
            const auto handled = bulk.handled();
            CHECK(handled.size() == 200);
            CHECK(times_handled(handled).size() == 200);
            // Listed, with a live heartbeat, while it runs.
            CHECK(sys.redis.command({"SISMEMBER", sys.keys().workers, "py-bulk"}).integer() == 1);
            bulk.process().signal(SIGTERM);
            bulk.expect_clean_exit();
        }

        // A retry (with the delay it asks for), then a success on attempt 2.
        insert_e2e_rows(sys.db, 1001, 1);
        {
            PythonWorker retrier(
                sys, mode, "py-retry",
                {"--fail-mode", "retry", "--retry-delay-ms", "100", "--max-tasks", "1"});
            retrier.expect_clean_exit();
            const auto handled = retrier.handled();
            REQUIRE(handled.size() == 1);
            CHECK(handled[0].id == "1001");
            CHECK(handled[0].attempt == 1);
            REQUIRE(eventually(10s, [&] { return row_sql(sys, "rp_attempts", 1001) == "1"; }));
            CHECK(row_sql(sys, "rp_last_error", 1001) == "test worker: retry requested");
        }
        {
            PythonWorker ok(sys, mode, "py-ok", {"--max-tasks", "1"});
            ok.expect_clean_exit();
            const auto handled = ok.handled();
            REQUIRE(handled.size() == 1);
            CHECK(handled[0].id == "1001");
            CHECK(handled[0].attempt == 2);
            REQUIRE(eventually(10s, [&] { return row_sql(sys, "status", 1001) == "1"; }));
            CHECK(row_sql(sys, "runs", 1001) == "1");
        }

        // extend(task, 10m) before a 2 s task: the claim's lease (5m) ends 10 minutes from
        // then while the task is still in hand, and the report is applied as usual.
        insert_e2e_rows(sys.db, 1004, 1);
        {
            PythonWorker extender(
                sys, mode, "py-extend",
                {"--extend-ms", "600000", "--work-ms", "2000", "--max-tasks", "1"});
            const bool extended = eventually(15s, [&] {
                return count_rows(sys,
                                  "user_id = 1004 AND status = 0 AND rp_lease_until > "
                                  "NOW(3) + INTERVAL 7 MINUTE") == 1 &&
                       extender.in_hand() == 1;
            });
            INFO("py-extend output:\n" << extender.output());
            REQUIRE(extended);
            extender.expect_clean_exit();
            REQUIRE(eventually(10s, [&] { return row_sql(sys, "runs", 1004) == "1"; }));
            CHECK(row_sql(sys, "rp_lease_until", 1004) == "NULL");
        }

        // A fail: the row is dead (on_dead ran), on_success never did.
        insert_e2e_rows(sys.db, 1002, 1);
        {
            PythonWorker failer(sys, mode, "py-fail", {"--fail-mode", "fail", "--max-tasks", "1"});
            failer.expect_clean_exit();
            REQUIRE(eventually(10s, [&] { return row_sql(sys, "rp_dead_at", 1002) != "NULL"; }));
            CHECK(row_sql(sys, "status", 1002) == "3");
            CHECK(row_sql(sys, "runs", 1002) == "0");
            CHECK(row_sql(sys, "rp_last_error", 1002) == "test worker: fail requested");
            CHECK(eventually(10s, [&] { return queue_stat(sys.redis, "users", "dead") == 1; }));
        }

        // A handler that never returns: past its deadline the task is reported as a retry
        // with reason "timeout", and the one thread is free to take the row's next attempt.
        insert_e2e_rows(sys.db, 1003, 1);
        {
            PythonWorker hang(sys, mode, "py-hang",
                              {"--fail-mode", "hang", "--timeout-ms", "300", "--threads", "1"});
            const bool again = eventually(20s, [&] { return hang.handled().size() >= 2; });
            INFO("py-hang output:\n" << hang.output());
            REQUIRE(again);
            const auto handled = hang.handled();
            CHECK(handled[0].id == "1003");
            CHECK(handled[0].attempt == 1);
            CHECK(handled[1].id == "1003");
            CHECK(handled[1].attempt == 2);
            CHECK(row_sql(sys, "rp_last_error", 1003) == "timeout");
            // SIGTERM with a hung handler in hand: its deadline ends it, then the worker.
            hang.process().signal(SIGTERM);
            hang.expect_clean_exit();
            CHECK(row_sql(sys, "runs", 1003) == "0");
        }

        // SIGKILL with four tasks in hand: the dispatcher takes them back once the heartbeat
        // (1 s) lapses, and the next worker does every row once, row 1003 too.
        insert_e2e_rows(sys.db, 2001, 20);
        {
            PythonWorker killed(sys, mode, "py-killed",
                                {"--work-ms", "60000", "--threads", "4", "--batch", "1",
                                 "--heartbeat-ttl-ms", "1000"});
            REQUIRE(eventually(20s, [&] { return killed.in_hand() == 4; }));
            const auto taken = parse_ready_all(list_all(sys.redis, killed.processing_key()));
            killed.process().kill();
            CHECK(killed.handled().empty());

            PythonWorker next(sys, mode, "py-next", {"--threads", "4"});
            REQUIRE(eventually(
                30s, [&] { return count_rows(sys, "status = 0") == 0; }, 50ms));
            CHECK(eventually(10s, [&] { return queue_stat(sys.redis, "users", "reaped") >= 4; }));
            CHECK(count_rows(sys, "user_id BETWEEN 2001 AND 2020 AND runs = 1") == 20);
            CHECK(row_sql(sys, "runs", 1003) == "1");
            // Each task py-killed held ran once more, as its next attempt.
            const auto handled = next.handled();
            for (const auto& lost : taken) {
                INFO("task " << lost.id << " attempt " << lost.attempt << " held by py-killed");
                CHECK(std::count_if(handled.begin(), handled.end(), [&](const HandledTask& t) {
                          return t.id == lost.id && t.attempt == lost.attempt + 1;
                      }) == 1);
            }
            next.process().signal(SIGTERM);
            next.expect_clean_exit();
        }

        // A fetch whose reply never arrives (the proxy cuts the connection, Redis moved the
        // task all the same): the worker notices that none of its threads holds the task and
        // gives it back, and it runs once (the lease, 5m, would come far too late).
        {
            ReplyCutProxy proxy(sys.bed.redis.port(), "\r\n5005:");
            PythonWorker cut(
                sys, mode, "py-cut",
                {"--threads", "2", "--batch", "1", "--redis-port", std::to_string(proxy.port())});
            REQUIRE(eventually(10s, [&] {
                return sys.redis.command({"EXISTS", sys.keys().heartbeat("py-cut")}).integer() == 1;
            }));
            insert_e2e_rows(sys.db, 5005, 1);
            REQUIRE(eventually(10s, [&] { return proxy.cut(); }));
            const bool done = eventually(20s, [&] { return row_sql(sys, "runs", 5005) == "1"; });
            INFO("py-cut output:\n" << cut.output());
            REQUIRE(done);
            const auto handled = cut.handled();
            REQUIRE(handled.size() == 1);
            CHECK(handled[0].id == "5005");
            CHECK(cut.output().find("whose reply was lost") != std::string::npos);
            cut.process().signal(SIGTERM);
            cut.expect_clean_exit();
        }

        // SIGTERM with tasks in hand: they finish and are reported; the rest stay due.
        insert_e2e_rows(sys.db, 3001, 12);
        {
            PythonWorker drained(sys, mode, "py-drain",
                                 {"--work-ms", "500", "--threads", "4", "--batch", "1"});
            REQUIRE(eventually(20s, [&] { return drained.in_hand() == 4; }));
            drained.process().signal(SIGTERM);
            drained.expect_clean_exit();
            const auto handled = drained.handled();
            REQUIRE(!handled.empty());
            for (const auto& t : handled) {
                INFO("task " << t.id);
                CHECK(
                    eventually(10s, [&] { return row_sql(sys, "runs", std::stoll(t.id)) == "1"; }));
            }
            // The others wait in the ready list for the next worker.
            const auto rest = 12 - static_cast<std::int64_t>(handled.size());
            CHECK(count_rows(sys, "user_id BETWEEN 3001 AND 3012 AND status = 0") == rest);
            CHECK(list_length(sys.redis, sys.keys().ready) == rest);
        }

        // The rest, taken five at a time (the take script; threads only); then the ledger:
        // every row but the dead one ran exactly once, and nothing was set aside.
        {
            PythonWorker last(sys, mode, "py-last", {"--threads", "2", "--batch", "5"});
            REQUIRE(eventually(
                20s, [&] { return sys.rows_left() == 0; }, 50ms));
            last.process().signal(SIGTERM);
            last.expect_clean_exit();
        }
        CHECK(count_rows(sys, "runs <> 1") == 1);
        CHECK(count_rows(sys, "runs = 0 AND user_id = 1002") == 1);
        CHECK(sys.rows_claimed() == 0);
        CHECK(queue_stat(sys.redis, "users", "bad") == 0);
        CHECK(queue_stat(sys.redis, "users", "stale") == 0);
        CHECK(list_length(sys.redis, sys.keys().bad) == 0);
    }
}
