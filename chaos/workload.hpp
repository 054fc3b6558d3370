#pragma once

// What the chaos run asks of rowpump: three queues on three tables, and a feeder that inserts
// their rows over the run as an application would.
//
//   once      one-shot: due while done = 0; on_success sets done and counts n
//   periodic  each row runs `rounds` times, 1 s apart: due while rounds_left > 0 and
//             next_at has passed
//   paced     one-shot with `rate`: all rows inserted at the start, so the limit binds
//
// Every on_success counts the row's applied outcomes (n = n + 1) and appends the claim token
// the worker reports (`claims`), so the verdict can tell which handler runs were applied.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rowpump/testing/mysql_client.hpp"
#include "rowpump/testing/rowpump_config.hpp"

namespace rowpump::chaos {

using Micros = std::int64_t;  // system clock, µs since the epoch: the ledger's clock
Micros now_micros();

struct WorkloadShape {
    std::int64_t once_rows = 0;
    std::int64_t periodic_rows = 0;
    int rounds = 3;  // applied outcomes each periodic row needs
    std::int64_t paced_rows = 0;
    int paced_per_second = 1;  // the paced queue's rate
    std::chrono::seconds lease{10};
    std::string claim = "mysql";  // every queue's claim mode (`claim:`)

    std::int64_t tasks() const { return once_rows + periodic_rows * rounds + paced_rows; }
};

// Splits `tasks` (applied outcomes in all) over the queues; the paced queue's rate is set so
// that its rows take about `seconds` to dispatch.
WorkloadShape shape_for(std::int64_t tasks, int seconds);

// The queue a table belongs to, and the applied outcomes each of its rows must end with.
struct QueueInfo {
    std::string queue;
    std::string table;
    int expected_runs;
};
std::vector<QueueInfo> queue_infos(const WorkloadShape& shape);

void create_tables(testing::MysqlClient& db);
std::vector<testing::QueueSpec> queue_specs(const WorkloadShape& shape);

// Inserts the rows over `duration` at an even pace from its own thread, retrying through
// MySQL outages (INSERT IGNORE, so a chunk that was committed before its connection broke
// is not an error the second time). Keeps when each one-shot row was inserted.
class Feeder {
public:
    Feeder(testing::MysqlLogin login, WorkloadShape shape, std::chrono::milliseconds duration);
    ~Feeder();
    Feeder(const Feeder&) = delete;
    Feeder& operator=(const Feeder&) = delete;

    bool finished() const { return finished_; }
    void stop();
    // (time, one-shot rows inserted by then), in time order.
    std::vector<std::pair<Micros, std::int64_t>> once_timeline() const;
    std::int64_t once_inserted() const { return once_done_; }
    std::string last_error() const;

private:
    void run();
    void insert_until(testing::MysqlClient& db, double fraction);

    testing::MysqlLogin login_;
    WorkloadShape shape_;
    std::chrono::milliseconds duration_;
    std::atomic<std::int64_t> once_done_{0};
    std::int64_t periodic_done_ = 0;
    std::atomic<bool> finished_{false};
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::vector<std::pair<Micros, std::int64_t>> timeline_;
    std::string last_error_;
    std::thread thread_;
};

}  // namespace rowpump::chaos
