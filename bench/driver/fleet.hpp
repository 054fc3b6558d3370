#pragma once

// A dispatcher and its worker processes for one measurement, and what the end-to-end
// benchmarks share to time and read them.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "driver/context.hpp"
#include "rowpump/common/protocol/protocol.hpp"

namespace rowpump::bench {

inline constexpr std::chrono::milliseconds kGrace{10000};
// The workers' own time limit (a safety net if the driver dies) must outlast the run's.
inline constexpr int kWorkerTimeLimit = 600;

// Keys of the queue every end-to-end run uses (bench_queue()).
const protocol::Keys& bench_keys();

// First column of every row, as integers (NULL as 0).
std::vector<std::int64_t> int_column(testing::MysqlClient& db, const std::string& query);

// The value at fraction `p` (0.5: the median) of sorted values; 0 for none.
double percentile(const std::vector<std::int64_t>& sorted, double p);

// A worker process on `sdk`'s SDK with the flags of bench/e2e_worker.cpp: the C++ program,
// or bench/workers/e2e_worker.{py,js} on the SDK in the source tree (Debian's python3, which
// sees python3-redis; node with worker-sdk/node's packages).
std::unique_ptr<ChildProcess> start_worker(Context& ctx, const std::string& sdk,
                                           std::vector<std::string> flags, std::string mode,
                                           const std::string& log);

// The dispatcher, then its workers once the queue is announced.
struct Fleet {
    std::unique_ptr<ChildProcess> dispatcher;
    std::vector<std::unique_ptr<ChildProcess>> workers;

    Fleet(Context& ctx, const std::string& config_file, const std::string& log_prefix,
          int processes, int threads, int batch, const std::string& mode, int handler_ms = 0,
          int time_limit_s = kWorkerTimeLimit, const std::string& sdk = "cpp");

    bool running();
    std::vector<ChildProcess*> all();
    // Workers first (they report what they hold), then the dispatcher (it applies it).
    void stop(testing::ResourceUsage& dispatcher_usage, double& workers_cpu);
};

// Polls the completed counter (bumped after each outcome batch commits) until `rows`, or
// until a process of the fleet has ended: nothing more would complete. Returns the tasks
// completed and the seconds since `start`.
std::pair<std::int64_t, double> time_until_completed(Context& ctx, Fleet& fleet, std::int64_t rows,
                                                     double start, double limit_s);

}  // namespace rowpump::bench
