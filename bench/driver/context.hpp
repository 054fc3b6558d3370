#pragma once

// What every benchmark of the driver shares: the servers, the programs it starts, the run
// directory (configs, logs, results.tsv) and the samples measured so far.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "driver/tables.hpp"
#include "rowpump/common/redis/redis.hpp"
#include "rowpump/testing/mysql_client.hpp"
#include "rowpump/testing/process.hpp"
#include "rowpump/testing/rowpump_config.hpp"
#include "rowpump/testing/server_env.hpp"

namespace rowpump::bench {

using testing::ChildProcess;
using testing::log_to;
using testing::ServerEnv;

struct Programs {
    std::string rowpump;
    std::string bare_dispatch;
    std::string e2e_worker;
    std::string row_claim_baseline;
    std::string source_dir;  // the SDKs of Python and Node.js and their bench/workers/ programs
};

// One measurement: benchmark name, configuration label, repetition, named figures.
struct Sample {
    std::string bench;
    std::string config;
    int rep = 0;
    std::map<std::string, double> values;
};

using testing::QueueSpec;
// Queue "bench" with rowpump's defaults and a lease of 1 h; each benchmark sets the table, id,
// due and order_by, and what else it varies.
QueueSpec bench_queue();

// CPU seconds of the two servers, read before and after a measurement.
struct ServerCpu {
    double mysql = 0;
    double redis = 0;
};

class Context {
public:
    Context(ServerEnv env, Programs programs, std::string run_dir);
    ~Context();

    const ServerEnv& env() const { return env_; }
    // The bookkeeping indexes of every table (see tables.hpp).
    const BookkeepingIndexes& indexes() const { return indexes_; }
    void set_indexes(BookkeepingIndexes indexes) { indexes_ = std::move(indexes); }
    const Programs& programs() const { return programs_; }
    testing::MysqlClient& db() { return *db_; }
    redis::Connection& redis() { return *redis_; }

    std::string path(const std::string& name) const { return run_dir_ + "/" + name; }
    // Writes a rowpump config for one queue, with `extra_lines` (top-level YAML such as
    // `http:`) verbatim; returns its path.
    std::string write_config(const QueueSpec& queue, const std::string& file_name,
                             const std::vector<std::string>& extra_lines = {}) const;

    // Empties Redis, then waits until MariaDB has purged old row versions and is idle, so
    // one measurement does not pay for the previous one.
    void reset_and_settle();
    ServerCpu server_cpu() const;

    std::int64_t list_length(const std::string& key);
    std::int64_t hash_int(const std::string& key, const std::string& field);

    void record(Sample sample);
    const std::vector<Sample>& samples() const { return samples_; }

private:
    ServerEnv env_;
    Programs programs_;
    std::string run_dir_;
    std::optional<testing::MysqlClient> db_;
    std::optional<redis::Connection> redis_;
    std::vector<Sample> samples_;
    BookkeepingIndexes indexes_{"lease"};
};

// "[bench] ..." on stderr, with the time of day.
void progress(const std::string& line);

// "table of N rows loaded in S s": what a large table costs before it is measured.
void log_load(std::int64_t rows, double seconds);

// Seconds on a monotonic clock, for timing.
double now_seconds();

}  // namespace rowpump::bench
