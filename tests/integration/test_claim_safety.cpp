// What a claim guarantees in both modes, shown on data with real workers and a handler ledger
// (each run's row, token, start and end, written by the handlers themselves):
// - a task running when Redis loses its data is not run again while it may still run: its
//   lease is waited out (claim: redis: the leader keeps what it pushed; a new leader that saw
//   the queue's epoch change claims nothing for one lease);
// - a task a plain consumer popped (BLPOP, no processing list) is held for its lease, and
//   `extend` extends it;
// - an outcome nobody was issued (a token computed offline) is refused as stale;
// - a row replaced while its task runs, and a row that stops being due while its task runs,
//   get what README "Semantics and guarantees" says.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/common/protocol/messages.hpp"
#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/e2e_worker.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/rowpump_cli.hpp"

using namespace rowpump::testing;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

namespace {

QueueSpec queue_in(const std::string& claim) {
    QueueSpec queue = e2e_queue();
    queue.claim = claim;
    return queue;
}

// Every handler run, as the handlers report it.
class Ledger {
public:
    std::size_t started(const std::string& id, const std::string& token) {
        std::lock_guard<std::mutex> lock(mutex_);
        runs_.push_back({id, token, SteadyClock::now(), {}});
        return runs_.size() - 1;
    }
    void ended(std::size_t run) {
        std::lock_guard<std::mutex> lock(mutex_);
        runs_[run].end = SteadyClock::now();
    }
    std::size_t size() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return runs_.size();
    }
    // Runs of a row that started while an earlier run of that row had not ended (a run not
    // ended yet counts as running), with a description of the first.
    std::pair<std::size_t, std::string> overlaps() const {
        std::lock_guard<std::mutex> lock(mutex_);
        std::map<std::string, std::vector<Run>> by_row;
        for (const auto& run : runs_) by_row[run.id].push_back(run);
        std::size_t found = 0;
        std::string first;
        for (auto& [id, runs] : by_row) {
            std::sort(runs.begin(), runs.end(),
                      [](const Run& a, const Run& b) { return a.start < b.start; });
            for (std::size_t i = 1; i < runs.size(); ++i) {
                const auto& before = runs[i - 1];
                const bool running =
                    before.end == SteadyClock::time_point{} || runs[i].start < before.end;
                if (!running) continue;
                if (found++ == 0) {
                    first = "row " + id + ": run of " + runs[i].token + " started while " +
                            before.token + " ran";
                }
            }
        }
        return {found, first};
    }

private:
    struct Run {
        std::string id, token;
        SteadyClock::time_point start, end;
    };
    mutable std::mutex mutex_;
    std::vector<Run> runs_;
};

const rowpump::Outcome kOk = rowpump::Outcome::success({{"status", "1"}});

// ---- 1. Redis loses its data while handlers run -------------------------------------------

void no_second_run_while_first_may_run(bool leader_change) {
    constexpr std::int64_t kRows = 10;
    constexpr auto kWork = seconds(6);  // shorter than the lease, far longer than lease/8
    QueueSpec queue = queue_in("redis");
    queue.lease = "8s";
    E2eSystem sys(queue, kRows);
    std::unique_ptr<Dispatcher> standby;
    if (leader_change) {
        // The first dispatcher leads before the second starts, so that the second stands by.
        REQUIRE(eventually(10s, [&] {
            return sys.dispatcher->log().find("took the leader lock") != std::string::npos;
        }));
        standby = sys.bed.start_dispatcher(sys.config, "standby.log");
        REQUIRE(eventually(
            10s, [&] { return standby->log().find("standing by") != std::string::npos; }));
    }
    Ledger ledger;
    auto options = e2e_worker_options(sys, "slow");
    options.threads = 2 * kRows;  // a second copy would start at once
    rowpump::Worker worker(options);
    RunningWorker running(worker, [&](const rowpump::Task& task) {
        const auto run = ledger.started(task.id, task.token);
        std::this_thread::sleep_for(kWork);
        ledger.ended(run);
        return kOk;
    });
    REQUIRE(eventually(20s, [&] { return ledger.size() == kRows; }));

    // Every handler runs. Redis restarts without its data (the leader lock, the lists, the
    // processing lists: no report of these runs can be applied), and with leader_change the
    // leader dies with it, so the stand-by leads next.
    if (leader_change) sys.dispatcher->process().kill();
    sys.bed.redis.stop();
    sys.bed.redis.start();
    sys.redis = sys.bed.redis_client();

    const bool done = eventually(
        90s, [&] { return sys.rows_left() == 0; }, 100ms);
    running.stop_and_join();
    const auto [overlapping, first] = ledger.overlaps();
    INFO(describe_stats(sys.redis, "users")
         << "; " << sys.table_summary() << "; handler runs " << ledger.size() << "\nleader log:\n"
         << sys.dispatcher->log_tail()
         << (standby ? "\nstand-by log:\n" + standby->log_tail() : ""));
    REQUIRE(done);
    CHECK(overlapping == 0);
    INFO(first);
    CHECK(first.empty());
    CHECK(sys.rows_not_run_once() == 0);  // each row's second run is the one applied
    if (leader_change) {
        CHECK(standby->log().find("claims nothing for one lease") != std::string::npos);
    } else {
        CHECK(sys.dispatcher->log().find("Redis lost its data") != std::string::npos);
    }
}

// ---- 2. Plain consumers: BLPOP, no processing list ----------------------------------------

// `threads` consumers as README "Protocol" describes the simplest: BLPOP a ready message,
// optionally send `extend`, work, push the done message.
class PlainConsumers {
public:
    PlainConsumers(E2eSystem& sys, int threads, milliseconds work,
                   std::optional<milliseconds> extend, Ledger& ledger) {
        const auto keys = sys.keys();
        for (int i = 0; i < threads; ++i) {
            threads_.emplace_back([this, &sys, keys, work, extend, &ledger] {
                auto redis = sys.bed.redis_client();
                while (!stop_) {
                    const auto popped = redis.command({"BLPOP", keys.ready, "1"}).strings();
                    if (popped.size() != 2) continue;
                    std::string error;
                    const auto task = rowpump::protocol::parse_ready(popped[1], error);
                    if (!task) continue;
                    rowpump::protocol::Done done;
                    done.task = *task;
                    const auto run = ledger.started(task->id, task->token);
                    if (extend) {
                        done.verb = rowpump::Verb::extend;
                        done.lease = *extend;
                        redis.command({"RPUSH", keys.done, rowpump::protocol::format_done(done)});
                    }
                    std::this_thread::sleep_for(work);
                    ledger.ended(run);
                    done.verb = rowpump::Verb::success;
                    done.values = {{"status", "1"}};
                    redis.command({"RPUSH", keys.done, rowpump::protocol::format_done(done)});
                }
            });
        }
    }
    ~PlainConsumers() {
        stop_ = true;
        for (auto& t : threads_) t.join();
    }

private:
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
};

void plain_consumer_is_held(const std::string& claim, milliseconds work,
                            std::optional<milliseconds> extend) {
    constexpr std::int64_t kRows = 10;
    QueueSpec queue = queue_in(claim);
    queue.lease = "8s";
    E2eSystem sys(queue, kRows);
    Ledger ledger;
    bool done = false;
    {
        PlainConsumers consumers(sys, 2 * kRows, work, extend, ledger);
        done = eventually(
            60s, [&] { return sys.rows_left() == 0; }, 100ms);
    }
    const auto [overlapping, first] = ledger.overlaps();
    INFO(claim << ": " << describe_stats(sys.redis, "users") << "; " << sys.table_summary()
               << "; handler runs " << ledger.size() << "; " << first << "\ndispatcher log:\n"
               << sys.dispatcher->log_tail());
    REQUIRE(done);
    CHECK(ledger.size() == static_cast<std::size_t>(kRows));  // each row run once
    CHECK(overlapping == 0);
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(queue_stat(sys.redis, "users", "stale") == 0);
    CHECK(queue_stat(sys.redis, "users", "dispatched") == kRows);
}

// Pauses the queue and waits for a cycle that saw it paused: after this, nothing is claimed.
void pause_and_settle(E2eSystem& sys) {
    REQUIRE(rowpump_cli({"pause", "-c", sys.config, "users"}).status.success());
    // A malformed done message is set aside by a cycle that read the pause with it.
    sys.redis.command({"RPUSH", sys.keys().done, "a probe, not a done message"});
    REQUIRE(eventually(10s, [&] { return list_length(sys.redis, sys.keys().bad) == 1; }));
}

}  // namespace

TEST_CASE(
    "e2e: claim: redis: a task running when Redis loses its data is not run again within its "
    "lease, by the same leader",
    "[e2e]") {
    no_second_run_while_first_may_run(false);
}

TEST_CASE(
    "e2e: claim: redis: a task running when Redis loses its data is not run again within its "
    "lease, after a leader change",
    "[e2e]") {
    no_second_run_while_first_may_run(true);
}

TEST_CASE("e2e: a plain BLPOP consumer's task is held for its lease, in both claim modes",
          "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    plain_consumer_is_held(claim, seconds(3), std::nullopt);
}

TEST_CASE(
    "e2e: a plain BLPOP consumer that sends extend keeps its task past the lease, in both "
    "claim modes",
    "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    plain_consumer_is_held(claim, seconds(12), milliseconds(30000));
}

TEST_CASE("e2e: a forged outcome for a due row never dispatched is refused, in both claim modes",
          "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    E2eSystem sys(queue_in(claim), 0);
    pause_and_settle(sys);
    insert_e2e_rows(sys.db, 1, 1);

    // The token as a scan would make it for a row never completed: any batch, the checksum
    // of an empty rp_token, attempt 1, the checksum of the id. A worker can compute it.
    const auto id_checksum = sys.db.scalar_string("SELECT LPAD(HEX(CRC32('1')), 8, '0')");
    REQUIRE(id_checksum);
    rowpump::protocol::Done forged;
    forged.task.id = "1";
    forged.task.token = "0BADF00D00000000-1-" + *id_checksum;
    forged.task.attempt = 1;
    forged.task.message = rowpump::protocol::format_ready(forged.task.id, forged.task.token);
    forged.verb = rowpump::Verb::success;
    forged.values = {{"status", "1"}};
    sys.redis.command({"RPUSH", sys.keys().done, rowpump::protocol::format_done(forged)});

    const bool settled = eventually(10s, [&] {
        return list_length(sys.redis, sys.keys().done) == 0 &&
               queue_stat(sys.redis, "users", "stale") +
                       queue_stat(sys.redis, "users", "completed") >
                   0;
    });
    INFO(claim << ": " << describe_stats(sys.redis, "users") << "; " << sys.table_summary()
               << "\ndispatcher log:\n"
               << sys.dispatcher->log_tail());
    REQUIRE(settled);
    CHECK(queue_stat(sys.redis, "users", "stale") == 1);
    CHECK(queue_stat(sys.redis, "users", "completed") == 0);
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 0 AND runs = 0 "
                        "AND rp_token IS NULL") == 1);

    // The row is still due, and runs once when the queue resumes.
    REQUIRE(rowpump_cli({"resume", "-c", sys.config, "users"}).status.success());
    rowpump::Worker worker(e2e_worker_options(sys, "after"));
    const auto task = worker.fetch(10s);
    REQUIRE(task);
    REQUIRE(worker.complete(*task, kOk));
    REQUIRE(eventually(10s, [&] { return sys.rows_left() == 0; }));
    CHECK(sys.rows_not_run_once() == 0);
}

TEST_CASE("e2e: a row replaced while its task runs: what each claim mode does", "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    E2eSystem sys(queue_in(claim), 1);
    rowpump::Worker worker(e2e_worker_options(sys, "replace"));
    const auto first = worker.fetch(10s);
    REQUIRE(first);
    sys.db.exec(
        "REPLACE INTO user_block_status (user_id, status, updated_time, runs) "
        "VALUES (1, 0, NOW(3), 0)");
    INFO(claim);
    if (claim == "mysql") {
        // The new row holds no claim: it is dispatched beside the old task, whose outcome is
        // then stale.
        const auto second = worker.fetch(20s);
        REQUIRE(second);
        CHECK(second->token != first->token);
        REQUIRE(worker.complete(*first, kOk));
        REQUIRE(eventually(10s, [&] { return queue_stat(sys.redis, "users", "stale") == 1; }));
        CHECK(sys.rows_left() == 1);
        REQUIRE(worker.complete(*second, kOk));
    } else {
        // The row is in flight under its id: the old task's outcome applies to the new row.
        REQUIRE(worker.complete(*first, kOk));
    }
    REQUIRE(eventually(10s, [&] { return sys.rows_left() == 0; }));
    INFO(describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    CHECK(sys.rows_not_run_once() == 0);
    CHECK(queue_stat(sys.redis, "users", "completed") == 1);
    CHECK(queue_stat(sys.redis, "users", "dispatched") == (claim == "mysql" ? 2 : 1));
}

TEST_CASE(
    "e2e: an outcome of a row that stopped being due while its task ran is applied, in both "
    "claim modes",
    "[e2e]") {
    // As a `due` of `expires_at > NOW()` that turns false while the handler runs.
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    QueueSpec queue = queue_in(claim);
    queue.due = "status = 0 AND runs < 100";
    E2eSystem sys(queue, 1);
    rowpump::Worker worker(e2e_worker_options(sys, "late"));
    const auto task = worker.fetch(10s);
    REQUIRE(task);
    sys.db.exec("UPDATE user_block_status SET runs = 100 WHERE user_id = 1");
    REQUIRE(worker.complete(*task, kOk));
    const bool applied = eventually(10s, [&] {
        return queue_stat(sys.redis, "users", "completed") +
                   queue_stat(sys.redis, "users", "stale") >
               0;
    });
    INFO(claim << ": " << describe_stats(sys.redis, "users") << "; " << sys.table_summary());
    REQUIRE(applied);
    CHECK(queue_stat(sys.redis, "users", "completed") == 1);
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 1 AND runs = 101") ==
          1);
}

// ---- 4. Forged tasks and reports waiting in Redis when a new leader takes over ------------

namespace {

// A token as a scan would make it for row `id` never completed (the checksum of an empty
// rp_token, attempt 1, the checksum of the id), with any first 8 hex digits: what a worker
// can compute offline.
std::string forged_token(MysqlClient& db, std::int64_t id) {
    const auto id_checksum =
        db.scalar_string("SELECT LPAD(HEX(CRC32('" + std::to_string(id) + "')), 8, '0')");
    REQUIRE(id_checksum);
    return "0BADF00D00000000-1-" + *id_checksum;
}

std::string forged_ok(MysqlClient& db, std::int64_t id) {
    return std::to_string(id) + ":" + forged_token(db, id) + " ok status=7";
}

}  // namespace

TEST_CASE(
    "e2e: forged tasks and reports waiting in Redis when a new leader takes over are refused, "
    "in both claim modes",
    "[e2e]") {
    const std::string claim = GENERATE(as<std::string>{}, "mysql", "redis");
    constexpr std::int64_t kRows = 20;
    QueueSpec queue = queue_in(claim);
    queue.due = "status = 0 AND runs < 100";
    E2eSystem sys(queue, kRows);
    const auto keys = sys.keys();
    // The first leader pushes every row; no worker runs yet.
    REQUIRE(eventually(20s, [&] { return queue_stat(sys.redis, "users", "dispatched") == kRows; }));
    sys.dispatcher->process().kill();

    // Rows 101-104 are not due (runs = 100): no dispatcher ever issues a task for them. Row
    // 105 is due and was never dispatched.
    sys.db.exec(
        "INSERT INTO user_block_status (user_id, status, updated_time, runs) VALUES "
        "(101, 0, NOW(3), 100), (102, 0, NOW(3), 100), (103, 0, NOW(3), 100), "
        "(104, 0, NOW(3), 100), (105, 0, NOW(3) - INTERVAL 1 HOUR, 0)");
    // Made up by a worker while no dispatcher leads: tasks in the ready list (102, 105) and
    // in a listed worker's processing list (103), and `ok` reports in the done list (101, 103,
    // 105) with a status no honest handler reports.
    sys.redis.command({"RPUSH", keys.ready, "102:" + forged_token(sys.db, 102),
                       "105:" + forged_token(sys.db, 105)});
    sys.redis.command({"SADD", keys.workers, "mallory"});
    sys.redis.command(
        {"SET", keys.heartbeat("mallory"), "incarnation=0000000000000000", "PX", "600000"});
    sys.redis.command({"RPUSH", keys.processing("mallory"), "103:" + forged_token(sys.db, 103)});
    sys.redis.command({"RPUSH", keys.done, forged_ok(sys.db, 101), forged_ok(sys.db, 103),
                       forged_ok(sys.db, 105)});

    // A second dispatcher takes over and learns what is in flight from Redis.
    auto second = sys.bed.start_dispatcher(sys.config, "second.log");
    REQUIRE(eventually(
        20s, [&] { return second->log().find("took the leader lock") != std::string::npos; }));
    Ledger ledger;
    rowpump::Worker worker(e2e_worker_options(sys, "honest"));
    RunningWorker running(worker, [&](const rowpump::Task& task) {
        ledger.ended(ledger.started(task.id, task.token));
        return kOk;
    });
    const auto due_left = [&] {
        return sys.db.scalar(
            "SELECT COUNT(*) FROM user_block_status WHERE status = 0 AND runs < 100");
    };
    const bool done = eventually(
        30s,
        [&] {
            return due_left() == 0 && list_length(sys.redis, keys.ready) == 0 &&
                   list_length(sys.redis, keys.done) == 0;
        },
        100ms);
    running.stop_and_join();
    INFO(claim << ": " << describe_stats(sys.redis, "users") << "; " << sys.table_summary()
               << "; handler runs " << ledger.size() << "\nsecond dispatcher's log:\n"
               << second->log_tail());
    REQUIRE(done);
    // No forged outcome applied: the rows never dispatched are as they were, no row has the
    // forged status, and every due row (105 too) ran once, by a task the dispatcher issued.
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE user_id BETWEEN 101 AND 104 "
                        "AND status = 0 AND runs = 100 AND rp_token IS NULL") == 4);
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 7") == 0);
    CHECK(sys.db.scalar("SELECT COUNT(*) FROM user_block_status WHERE runs < 100 AND "
                        "(runs <> 1 OR status <> 1)") == 0);
    CHECK(queue_stat(sys.redis, "users", "completed") == kRows + 1);
    CHECK(queue_stat(sys.redis, "users", "stale") >= 3);
    if (claim == "redis") {
        CHECK(second->log().find("carry a token no dispatcher of this queue issued") !=
              std::string::npos);
    }
}
