#pragma once

// What every benchmark of the driver shares: the servers, the programs it starts, the run
// directory (configs, logs, results.tsv) and the samples measured so far.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/common/redis.hpp"
#include "driver/tables.hpp"
#include "support/process.hpp"
#include "support/server_env.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump::bench {

struct Programs {
    std::string rowpump;
    std::string bare_dispatch;
    std::string e2e_worker;
    std::string row_claim_baseline;
};

// One measurement: benchmark name, configuration label, repetition, named figures.
struct Sample {
    std::string bench;
    std::string config;
    int rep = 0;
    std::map<std::string, double> values;
};

// The queue settings the benchmarks vary; everything else is rowpump's default.
struct QueueSpec {
    std::string name = "bench";
    std::string table;
    std::string id;
    std::string due;
    std::string order_by;
    int batch = 1000;
    std::string lease = "1h";
    std::int64_t max_backlog = 10000;
    std::string on_success;
    std::string poll_min;  // empty: default
};

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
    sql::Connection& db() { return *db_; }
    redis::Connection& redis() { return *redis_; }

    std::string path(const std::string& name) const { return run_dir_ + "/" + name; }
    // Writes a rowpump config for one queue; returns its path.
    std::string write_config(const QueueSpec& queue, const std::string& file_name) const;

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
    std::unique_ptr<sql::Connection> db_;
    std::optional<redis::Connection> redis_;
    std::vector<Sample> samples_;
    BookkeepingIndexes indexes_{"lease"};
};

// "[bench] ..." on stderr, with the time of day.
void progress(const std::string& line);

}  // namespace rowpump::bench
