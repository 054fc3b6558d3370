#include "rowpump/testing/e2e_system.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "rowpump/testing/rowpump_cli.hpp"
#include "rowpump/testing/temp_dir.hpp"

namespace rowpump::testing {

std::string settled_token(const std::string& token) {
    std::string settled = token;
    // With claim: redis the row never sees the MAC at the token's end (TokenMac::unsealed).
    const auto dash = settled.rfind('-');
    if (dash != std::string::npos && settled.size() - dash - 1 == 8 + 16)
        settled.resize(settled.size() - 16);
    if (settled.size() > 15) settled[15] = '=';
    return settled;
}

void create_e2e_table(MysqlClient& db) {
    db.exec(
        "CREATE TABLE user_block_status (user_id BIGINT PRIMARY KEY, "
        "status TINYINT NOT NULL DEFAULT 0, updated_time DATETIME(3) NOT NULL, "
        "runs INT NOT NULL DEFAULT 0, KEY (updated_time)) ENGINE=InnoDB");
}

void insert_e2e_rows(MysqlClient& db, std::int64_t first_id, std::int64_t count) {
    constexpr std::int64_t kRowsPerInsert = 1000;
    for (std::int64_t begin = first_id; begin < first_id + count; begin += kRowsPerInsert) {
        const std::int64_t end = std::min(first_id + count, begin + kRowsPerInsert);
        std::string sql = "INSERT INTO user_block_status (user_id, status, updated_time) VALUES ";
        for (std::int64_t id = begin; id < end; ++id) {
            sql += (id == begin ? "(" : ",(") + std::to_string(id) + ",0,NOW(3) - INTERVAL 1 HOUR)";
        }
        db.exec(sql);
    }
}

QueueSpec e2e_queue() {
    QueueSpec q;
    q.name = "users";
    q.due = "status = 0";
    q.order_by = "user_id";
    q.on_success = "status = :status, runs = runs + 1, updated_time = NOW(3)";
    q.poll_min = "10ms";
    q.poll_max = "100ms";
    return q;
}

E2eSystem::E2eSystem(const QueueSpec& spec, std::int64_t rows, ServerClock mysql_clock,
                     ServerClock redis_clock)
    : bed(mysql_clock, redis_clock), queue(spec), db(bed.db()), redis(bed.redis_client()) {
    create_e2e_table(db);
    insert_e2e_rows(db, 1, rows);
    config = bed.write_config({queue});
    migrate_apply(config);
    dispatcher = bed.start_dispatcher(config);
}

std::int64_t E2eSystem::rows_left() {
    return db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 0");
}

std::int64_t E2eSystem::rows_not_run_once() {
    return db.scalar("SELECT COUNT(*) FROM user_block_status WHERE runs <> 1");
}

std::int64_t E2eSystem::rows_claimed() {
    return db.scalar(std::string("SELECT COUNT(*) FROM user_block_status WHERE ") + kClaimedSql);
}

std::string E2eSystem::table_summary() {
    std::ostringstream out;
    out << "rows by (status, runs, claimed, dead): ";
    for (const Row& r :
         db.rows(std::string("SELECT status, runs, ") + kClaimedSql +
                 ", rp_dead_at IS NOT NULL, COUNT(*) FROM user_block_status GROUP BY 1, 2, 3, 4")) {
        out << "(" << r[0].value_or("NULL") << ", " << r[1].value_or("NULL") << ", "
            << r[2].value_or("?") << ", " << r[3].value_or("?") << "): " << r[4].value_or("?")
            << "; ";
    }
    return out.str();
}

std::map<std::string, std::int64_t> queue_stats(redis::Connection& redis,
                                                const std::string& queue) {
    std::vector<std::string> flat =
        redis.command({"HGETALL", protocol::keys_for(queue).stats}).strings();
    std::map<std::string, std::int64_t> stats;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) stats[flat[i]] = std::stoll(flat[i + 1]);
    return stats;
}

std::int64_t queue_stat(redis::Connection& redis, const std::string& queue,
                        const std::string& field) {
    auto value = redis.command({"HGET", protocol::keys_for(queue).stats, field}).optional_string();
    return value ? std::stoll(*value) : 0;
}

std::string describe_stats(redis::Connection& redis, const std::string& queue) {
    std::string out = "stats:";
    for (const auto& [field, value] : queue_stats(redis, queue)) {
        out += " " + field + "=" + std::to_string(value);
    }
    return out;
}

std::vector<HandledTask> read_task_log(const std::string& path) {
    std::vector<HandledTask> tasks;
    std::istringstream in(read_file(path));
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        HandledTask task;
        if (fields >> task.id >> task.token >> task.attempt) tasks.push_back(std::move(task));
    }
    return tasks;
}

TestWorkerProcess::TestWorkerProcess(const std::string& exe, const E2eSystem& system,
                                     TestWorkerSpec spec)
    : TestWorkerProcess(exe, system.bed.redis.port(), system.bed.dir, std::move(spec)) {}

TestWorkerProcess::TestWorkerProcess(const std::string& exe, int redis_port, const TempDir& dir,
                                     TestWorkerSpec spec)
    : spec_(std::move(spec)),
      task_log_(dir.file(spec_.worker_id + ".tasks")),
      output_(dir.file(spec_.worker_id + ".out")) {
    if (spec_.worker_id.empty()) {
        throw std::invalid_argument("TestWorkerProcess: worker_id is required");
    }
    std::vector<std::string> argv{exe};
    auto flag = [&](const char* name, const std::string& value) {
        argv.push_back(name);
        argv.push_back(value);
    };
    flag("--redis-host", "127.0.0.1");
    flag("--redis-port", std::to_string(redis_port));
    flag("--queue", spec_.queue);
    flag("--worker-id", spec_.worker_id);
    flag("--threads", std::to_string(spec_.threads));
    flag("--batch", std::to_string(spec_.batch));
    flag("--heartbeat-ttl-ms", std::to_string(spec_.heartbeat_ttl.count()));
    flag("--work-ms", std::to_string(spec_.work.count()));
    flag("--log", task_log_);
    for (const auto& value : spec_.values) flag("--value", value);
    argv.insert(argv.end(), spec_.extra_args.begin(), spec_.extra_args.end());
    SpawnOptions options;
    options.stdout_path = output_;
    process_ = std::make_unique<ChildProcess>(argv, options);
}

std::string TestWorkerProcess::output() const {
    return read_file(output_);
}

std::string TestWorkerProcess::processing_key() const {
    return protocol::keys_for(spec_.queue).processing(spec_.worker_id);
}

}  // namespace rowpump::testing
