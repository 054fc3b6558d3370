#pragma once

// End-to-end tests: the dispatcher and real workers (rowpump_test_worker processes,
// in-process rowpump::Worker, a redis-cli script) on a user_block_status table with a
// `runs` column that counts how often on_success was applied to each row, so that "no
// outcome applied twice" can be read from the data.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/common/redis/redis.hpp"
#include "rowpump/testing/process.hpp"
#include "rowpump/testing/test_bed.hpp"

namespace rowpump::testing {

// A row still claimed: it has a claim token, not the settled one its applied outcome leaves
// ('=' for the token's 16th character).
inline constexpr const char* kClaimedSql =
    "(rp_token IS NOT NULL AND SUBSTRING(rp_token, 16, 1) <> '=')";
// The token a row keeps once the outcome of the claim with `token` is applied (with claim:
// redis, without the MAC at the token's end).
std::string settled_token(const std::string& token);

// user_block_status plus `runs INT NOT NULL DEFAULT 0`; no bookkeeping columns yet.
void create_e2e_table(MysqlClient& db);
// Rows first_id .. first_id+count-1 with status 0, runs 0.
void insert_e2e_rows(MysqlClient& db, std::int64_t first_id, std::int64_t count);

// Queue "users", one-shot: due while status = 0, so a completed row is never due again;
// on_success sets :status and counts the run.
QueueSpec e2e_queue();

// A running system: servers, the table with `rows` due rows, the migrated bookkeeping
// columns, and `rowpump run` as a child process.
struct E2eSystem {
    E2eSystem(const QueueSpec& queue, std::int64_t rows,
              ServerClock mysql_clock = ServerClock::real,
              ServerClock redis_clock = ServerClock::real);

    std::string queue_name() const { return queue.name; }
    protocol::Keys keys() const { return protocol::keys_for(queue.name); }

    // Rows not completed yet (status still 0), and rows whose on_success did not run exactly once.
    std::int64_t rows_left();
    std::int64_t rows_not_run_once();
    std::int64_t rows_claimed();  // rows with a claim token (kClaimedSql)
    // Counts by (status, runs, claimed) for failure messages.
    std::string table_summary();

    TestBed bed;
    QueueSpec queue;
    MysqlClient db;
    redis::Connection redis;
    std::string config;
    std::unique_ptr<Dispatcher> dispatcher;
};

// Counters of rowpump:{queue}:stats; a missing field reads 0.
std::map<std::string, std::int64_t> queue_stats(redis::Connection& redis, const std::string& queue);
std::int64_t queue_stat(redis::Connection& redis, const std::string& queue,
                        const std::string& field);
std::string describe_stats(redis::Connection& redis, const std::string& queue);

// One line of rowpump_test_worker's --log file.
struct HandledTask {
    std::string id;
    std::string token;
    int attempt = 0;
};
std::vector<HandledTask> read_task_log(const std::string& path);

struct TestWorkerSpec {
    std::string worker_id;  // required: tests find the worker's keys by it
    std::string queue = "users";
    int threads = 1;
    int batch = 1;  // tasks per round trip (WorkerOptions::batch)
    std::chrono::milliseconds heartbeat_ttl{10000};
    std::chrono::milliseconds work{0};
    std::vector<std::string> values = {"status=1"};
    std::vector<std::string> extra_args;
};

// rowpump_test_worker (at `exe`) as a child process; its task log and output go to the
// system's scratch directory. Killed when destroyed.
class TestWorkerProcess {
public:
    TestWorkerProcess(const std::string& exe, const E2eSystem& system, TestWorkerSpec spec);
    // Against the Redis on `redis_port`, with its files in `dir`.
    TestWorkerProcess(const std::string& exe, int redis_port, const TempDir& dir,
                      TestWorkerSpec spec);

    const std::string& id() const { return spec_.worker_id; }
    ChildProcess& process() { return *process_; }
    std::string task_log_path() const { return task_log_; }
    std::string output() const;
    std::vector<HandledTask> handled() const { return read_task_log(task_log_); }
    std::string processing_key() const;

private:
    TestWorkerSpec spec_;
    std::string task_log_;
    std::string output_;
    std::unique_ptr<ChildProcess> process_;
};

}  // namespace rowpump::testing
