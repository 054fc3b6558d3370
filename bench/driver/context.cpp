#include "driver/context.hpp"

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <thread>

namespace rowpump::bench {

namespace {

constexpr std::int64_t kSettledHistory = 1000;  // undo records still to purge
constexpr double kIdleCpuShare = 0.05;          // of one core, over kIdleWindow
constexpr std::chrono::milliseconds kIdleWindow{500};
constexpr std::chrono::seconds kSettleLimit{90};

RedisAddress redis_address(const ServerEnv& env) {
    RedisAddress address;
    address.host = env.redis_host;
    address.port = env.redis_port;
    return address;
}

constexpr std::chrono::milliseconds kRedisTimeout{30000};  // FLUSHALL of ~1M entries

}  // namespace

void progress(const std::string& line) {
    const std::time_t now = std::time(nullptr);
    char stamp[16];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&now));
    std::cerr << "[bench " << stamp << "] " << line << std::endl;
}

void log_load(std::int64_t rows, double seconds) {
    progress("table of " + std::to_string(rows) + " rows loaded in " +
             std::to_string(static_cast<int>(seconds + 0.5)) + " s");
}

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Context::Context(ServerEnv env, Programs programs, std::string run_dir)
    : env_(std::move(env)), programs_(std::move(programs)), run_dir_(std::move(run_dir)) {
    db_.emplace(testing::MysqlClient::connect_as_dispatcher(env_.mysql));
    redis_.emplace(redis::Connection::connect(redis_address(env_), kRedisTimeout));
}

Context::~Context() = default;

QueueSpec bench_queue() {
    QueueSpec q;
    q.name = "bench";
    q.batch = 1000;
    q.lease = "1h";
    q.max_backlog = 10000;
    q.on_success = "";
    q.poll_min = "50ms";
    q.poll_max = "1s";
    return q;
}

std::string Context::write_config(const QueueSpec& q, const std::string& file_name,
                                  const std::vector<std::string>& extra_lines) const {
    testing::ConfigSpec spec;
    spec.mysql_host = env_.mysql.host;
    spec.mysql_port = env_.mysql.port;
    spec.user = env_.mysql.user;
    // rowpump reads it from the environment: the password never lands in the run directory.
    spec.password = "${ROWPUMP_MYSQL_PASSWORD}";
    spec.database = env_.mysql.database;
    spec.redis_host = env_.redis_host;
    spec.redis_port = env_.redis_port;
    spec.log_level = "info";
    spec.queues = {q};
    spec.extra_lines = extra_lines;
    return testing::write_config(path(file_name), spec);
}

void Context::reset_and_settle() {
    redis_->command({"FLUSHALL"});
    const auto deadline = std::chrono::steady_clock::now() + kSettleLimit;
    for (;;) {
        const auto history = db_->scalar(
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
            "WHERE VARIABLE_NAME = 'INNODB_HISTORY_LIST_LENGTH'");
        const auto before = testing::process_cpu_seconds(env_.mysql_pid);
        std::this_thread::sleep_for(kIdleWindow);
        const auto after = testing::process_cpu_seconds(env_.mysql_pid);
        const double busy = before && after ? (*after - *before) / 0.5 : 0.0;
        if (history < kSettledHistory && busy < kIdleCpuShare) return;
        if (std::chrono::steady_clock::now() >= deadline) {
            progress("MariaDB not idle after 90 s (history list " + std::to_string(history) +
                     ", CPU " + std::to_string(busy) + "); measuring anyway");
            return;
        }
    }
}

ServerCpu Context::server_cpu() const {
    return {testing::process_cpu_seconds(env_.mysql_pid).value_or(0),
            testing::process_cpu_seconds(env_.redis_pid).value_or(0)};
}

std::int64_t Context::list_length(const std::string& key) {
    return redis_->command({"LLEN", key}).integer();
}

std::int64_t Context::hash_int(const std::string& key, const std::string& field) {
    const auto value = redis_->command({"HGET", key, field}).optional_string();
    return value ? std::stoll(*value) : 0;
}

void Context::record(Sample sample) {
    std::ofstream out(path("results.tsv"), std::ios::app);
    out << sample.bench << "\t" << sample.config << "\t" << sample.rep;
    for (const auto& [name, value] : sample.values) out << "\t" << name << "=" << value;
    out << "\n";
    samples_.push_back(std::move(sample));
}

}  // namespace rowpump::bench
