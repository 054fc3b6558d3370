#pragma once

// What the chaos run asks of rowpump: five queues on five tables, and a feeder that inserts
// their rows over the run as an application would.
//
//   once      one-shot: due while done = 0; on_success sets done and counts n
//   periodic  each row runs `rounds` times, 1 s apart: due while rounds_left > 0 and
//             next_at has passed
//   paced     one-shot with `rate`: all rows inserted at the start, so the limit binds
//   uuid      one-shot on a table whose primary key is a CHAR(36) UUID
//   keyed     one-shot with `group_by: tenant`, `concurrency_per_key` and `rate_per_key`,
//             inserted in bursts of more rows per key than either limit, so both bind at every
//             burst; its handler takes kKeyedHandlerMs and notes its end in the ledger too
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

// What the chaos workers' handler returns (each language's worker applies the same rule):
// `once` rows whose id is 250 mod 500 fail (the row ends dead, with no outcome applied),
// `once` rows whose id is 7 mod 20 ask for a retry on their first attempt; every other run
// succeeds. The ledger records the outcome of each run.
enum class Planned { ok, retry, fail };
Planned planned_outcome(const std::string& queue, const std::string& id, int attempt);
std::string planned_name(Planned planned);  // "ok", "retry", "fail": the ledger's word
// Rows that must end dead (by their `fail`), with no outcome applied.
bool fails_on_purpose(const std::string& queue, const std::string& id);

// The keyed queue: `group_by: tenant` over kKeyedKeys keys, `concurrency_per_key:
// kKeyedConcurrency`, `rate_per_key` from the shape (keyed_rate_rows per keyed_rate_period),
// always `claim: mysql` (group_by does not work with claim: redis yet). Row `id` (1-based)
// belongs to key (id - 1) mod kKeyedKeys; the feeder inserts whole bursts of kKeyedBurst rows
// (kKeyedBurst / kKeyedKeys per key, twice the concurrency limit). Its handler runs for
// kKeyedHandlerMs (each language's worker applies the same rule) and appends a second ledger
// line when it ends, so that the verdict sees which runs of a key overlapped.
constexpr const char* kKeyedQueue = "keyed";
constexpr int kKeyedKeys = 6;
constexpr int kKeyedConcurrency = 2;
constexpr int kKeyedBurst = kKeyedKeys * kKeyedConcurrency * 2;
constexpr int kKeyedHandlerMs = 100;
std::string keyed_key(const std::string& id);

struct WorkloadShape {
    std::int64_t once_rows = 0;
    std::int64_t periodic_rows = 0;
    int rounds = 3;  // applied outcomes each periodic row needs
    std::int64_t paced_rows = 0;
    int paced_per_second = 1;  // the paced queue's rate
    std::int64_t uuid_rows = 0;
    std::int64_t keyed_rows = 0;  // a multiple of kKeyedBurst
    // The keyed queue's rate_per_key: keyed_rate_rows per keyed_rate_period, for each key.
    int keyed_rate_rows = 1;
    std::chrono::milliseconds keyed_rate_period{1000};
    std::chrono::seconds lease{10};
    std::string claim = "mysql";  // every queue's claim mode (`claim:`)

    std::int64_t tasks() const {
        return once_rows + periodic_rows * rounds + paced_rows + uuid_rows + keyed_rows;
    }
    std::int64_t rows() const {
        return once_rows + periodic_rows + paced_rows + uuid_rows + keyed_rows;
    }
};

// Splits `tasks` (applied outcomes in all) over the queues; the paced queue's rate is set so
// that its rows take about `seconds` to dispatch. The keyed queue's rate_per_key is fewer rows
// than a key gets in one burst (so the last of each burst waits for the window) and half as
// much again as a key's rows come in over the run (so its rows keep up and finish with the
// others): 3 rows per half the time between bursts, at most 2 s (the last burst's last row
// waits that long), and when that would be under 500 ms, as many rows per 500 ms as keep that
// margin.
WorkloadShape shape_for(std::int64_t tasks, int seconds);
// `rate_per_key`'s text for the shape, e.g. "3/1400ms".
std::string keyed_rate_text(const WorkloadShape& shape);

// The queue a table belongs to, and the applied outcomes each of its rows must end with.
struct QueueInfo {
    std::string queue;
    std::string table;
    int expected_runs;
};
// The uuid queue's rate: far above what it reaches, only so that the reply to each of its
// pushes carries a number no other reply has (push.lua returns the rows the window still
// takes, 987654321 minus a few), which the push_reply_cut fault looks for.
constexpr const char* kUuidRate = "987654321/1s";
constexpr const char* kUuidPushReply = "\r\n98765";
// The uuid queue's row `n` (1-based): a version-4-shaped UUID made from n, never starting
// with 9 (so no id looks like kUuidPushReply's number).
std::string uuid_of(std::int64_t n);
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
    std::int64_t uuid_done_ = 0;
    std::int64_t keyed_done_ = 0;
    std::atomic<bool> finished_{false};
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::vector<std::pair<Micros, std::int64_t>> timeline_;
    std::string last_error_;
    std::thread thread_;
};

}  // namespace rowpump::chaos
