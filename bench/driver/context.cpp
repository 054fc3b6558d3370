#include "driver/context.hpp"

#include <mysql_connection.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "support/mysql.hpp"

namespace rowpump::bench {

namespace {

constexpr std::int64_t kSettledHistory = 1000;  // undo records still to purge
constexpr double kIdleCpuShare = 0.05;          // of one core, over kIdleWindow
constexpr std::chrono::milliseconds kIdleWindow{500};
constexpr std::chrono::seconds kSettleLimit{90};

redis::Options redis_options(const ServerEnv& env) {
    redis::Options options;
    options.host = env.redis_host;
    options.port = env.redis_port;
    options.command_timeout = std::chrono::milliseconds(30000);  // FLUSHALL of ~1M entries
    return options;
}

}  // namespace

void progress(const std::string& line) {
    const std::time_t now = std::time(nullptr);
    char stamp[16];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&now));
    std::cerr << "[bench " << stamp << "] " << line << std::endl;
}

Context::Context(ServerEnv env, Programs programs, std::string run_dir)
    : env_(std::move(env)), programs_(std::move(programs)), run_dir_(std::move(run_dir)) {
    db_ = connect_mysql(env_);
    redis_.emplace(redis::Connection::connect(redis_options(env_)));
}

Context::~Context() = default;

std::string Context::write_config(const QueueSpec& q, const std::string& file_name) const {
    const std::string file = path(file_name);
    std::ofstream out(file);
    out << "mysql: { host: " << env_.mysql_host << ", port: " << env_.mysql_port
        << ", user: " << env_.mysql_user
        << ", password: \"${ROWPUMP_MYSQL_PASSWORD}\", database: " << env_.mysql_database << " }\n"
        << "redis: { host: " << env_.redis_host << ", port: " << env_.redis_port << " }\n"
        << "log_level: info\n"
        << "queues:\n"
        << "  " << q.name << ":\n"
        << "    table: " << q.table << "\n"
        << "    id: " << q.id << "\n"
        << "    due: \"" << q.due << "\"\n"
        << "    order_by: " << q.order_by << "\n"
        << "    batch: " << q.batch << "\n"
        << "    lease: " << q.lease << "\n"
        << "    max_backlog: " << q.max_backlog << "\n";
    if (!q.on_success.empty()) out << "    on_success: \"" << q.on_success << "\"\n";
    if (!q.poll_min.empty()) out << "    poll: { min: " << q.poll_min << ", max: 1s }\n";
    if (!out) throw std::runtime_error("cannot write " + file);
    return file;
}

void Context::reset_and_settle() {
    redis_->command({"FLUSHALL"});
    const auto deadline = std::chrono::steady_clock::now() + kSettleLimit;
    for (;;) {
        const auto history =
            query_int(*db_,
                      "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                      "WHERE VARIABLE_NAME = 'INNODB_HISTORY_LIST_LENGTH'");
        const auto before = process_cpu_seconds(env_.mysql_pid);
        std::this_thread::sleep_for(kIdleWindow);
        const auto after = process_cpu_seconds(env_.mysql_pid);
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
    return {process_cpu_seconds(env_.mysql_pid).value_or(0),
            process_cpu_seconds(env_.redis_pid).value_or(0)};
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
