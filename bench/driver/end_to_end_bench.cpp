// Benchmark C (end-to-end throughput and due-to-start latency) and D (per-worker claims
// straight from MySQL, the articles' starting point).

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "driver/benchmarks.hpp"
#include "driver/fleet.hpp"
#include "driver/tables.hpp"
#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/common/protocol/queue_stats.hpp"

namespace rowpump::bench {

namespace {

// "4x8" with the SDK's default batch (adaptive), "4x8x16" with batch 16; "+10ms" when the
// handler sleeps; "@redis" with claim: redis; "python:" or "node:" before it for those SDKs.
std::string label(const EndToEndSpec& spec) {
    return (spec.sdk == "cpp" ? "" : spec.sdk + ":") + std::to_string(spec.processes) + "x" +
           std::to_string(spec.threads) +
           (spec.worker_batch > 0 ? "x" + std::to_string(spec.worker_batch) : "") +
           (spec.handler_ms > 0 ? "+" + std::to_string(spec.handler_ms) + "ms" : "") +
           (spec.claim.empty() ? "" : "@" + spec.claim);
}

// MariaDB's statement counters (SHOW GLOBAL STATUS) that the sample reports per task, as
// "<name>_per_task": what the dispatcher's statements cost, counted by the server. Prepared
// statements count under their kind too (COM_UPDATE) as well as in COM_STMT_EXECUTE; an
// UPDATE that joins a derived table (claims; outcomes, except claim: redis's equal
// successes, which update by id) is a COM_UPDATE_MULTI.
const std::vector<std::string> kStatementCounters{
    "COM_SELECT", "COM_UPDATE",       "COM_UPDATE_MULTI",  "COM_INSERT",
    "COM_COMMIT", "COM_STMT_EXECUTE", "HANDLER_READ_NEXT", "HANDLER_READ_KEY"};

std::map<std::string, std::int64_t> statement_counts(testing::MysqlClient& db) {
    std::map<std::string, std::int64_t> counts;
    for (const auto& name : kStatementCounters) {
        counts[name] = db.scalar(
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '" +
            name + "'");
    }
    return counts;
}

std::string lowercase(std::string text) {
    for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

std::string last_line_with(const std::string& file, const std::string& marker) {
    std::ifstream in(file);
    std::string line, found;
    while (std::getline(in, line)) {
        if (line.find(marker) != std::string::npos) found = line;
    }
    return found;
}

double field(const std::string& line, const std::string& name) {
    const auto at = line.find(name + "=");
    if (at == std::string::npos) throw std::runtime_error("no " + name + " in: " + line);
    return std::stod(line.substr(at + name.size() + 1));
}

// One row at a time, each due when it is inserted, at `rate` rows/s; with `nudge`, each
// insert is followed by the protocol's nudge, as a producer would send it.
void insert_due_rows(Context& ctx, std::int64_t rows, double rate, bool nudge) {
    using Clock = std::chrono::steady_clock;
    const auto step =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
    const auto start = Clock::now();
    for (std::int64_t i = 1; i <= rows; ++i) {
        std::this_thread::sleep_until(start + (i - 1) * step);
        ctx.db().exec("INSERT INTO timed_tasks (id, status, due_at) VALUES (" + std::to_string(i) +
                      ", 0, NOW(6))");
        if (nudge) ctx.redis().command({"PUBLISH", bench_keys().nudge, "1"});
    }
}

}  // namespace

Sample run_end_to_end(Context& ctx, const EndToEndSpec& spec, int rep) {
    const double load_start = now_seconds();
    create_task_table(ctx.db(), spec.rows, ctx.indexes(), spec.payload_table);
    log_load(spec.rows, now_seconds() - load_start);
    ctx.reset_and_settle();
    QueueSpec q = bench_queue();
    q.table = "tasks";
    q.id = "user_id";
    q.due = "status = 0";
    q.order_by = "updated_time";
    q.batch = spec.batch;
    q.lease = "5m";
    q.max_backlog = spec.max_backlog;
    q.on_success = "status = :status";
    q.claim = spec.claim.empty() ? "default" : spec.claim;  // empty: no claim: key
    if (spec.payload > 0)
        q.extra_lines.push_back(std::string("payload: [") + kPayloadColumns + "]");
    const std::string config =
        label(spec) + spec.note +
        (spec.payload_table ? " payload=" + std::to_string(spec.payload) : "");
    const auto file = ctx.write_config(q, "e2e.yaml");

    const auto cpu_before = ctx.server_cpu();
    const auto updated_before = testing::rows_updated(ctx.db());
    const auto statements_before = statement_counts(ctx.db());
    const double start = now_seconds();
    Fleet fleet(ctx, file, "logs/" + spec.bench + "-" + config + "-rep" + std::to_string(rep),
                spec.processes, spec.threads, spec.worker_batch, "noop", spec.handler_ms,
                spec.time_limit_s, spec.sdk);
    const auto [completed, seconds] =
        time_until_completed(ctx, fleet, spec.rows, start, spec.time_limit_s);
    const auto cpu_after = ctx.server_cpu();
    const auto updated = testing::rows_updated(ctx.db()) - updated_before;
    const auto statements_after = statement_counts(ctx.db());
    testing::ResourceUsage dispatcher;
    double workers_cpu = 0;
    fleet.stop(dispatcher, workers_cpu);
    const auto left = ctx.db().scalar("SELECT COUNT(*) FROM tasks WHERE status = 0");
    // Every ready message is taken by one worker only, so messages beyond the rows count the
    // rows handed to a handler more than once (a lease that ran out, a reclaimed row).
    const auto dispatched = ctx.hash_int(bench_keys().stats, protocol::kStatDispatched);

    Sample s{spec.bench, config, rep, {}};
    s.values["table_rows"] = static_cast<double>(spec.rows);
    s.values["completed"] = static_cast<double>(completed);
    s.values["seconds"] = seconds;
    s.values["finished"] = completed >= spec.rows && left == 0 ? 1 : 0;
    s.values["not_done_in_mysql"] = static_cast<double>(left);
    s.values["dispatched"] = static_cast<double>(dispatched);
    s.values["tasks_per_s"] = static_cast<double>(completed) / seconds;
    s.values["dispatcher_cpu_s"] = dispatcher.cpu_seconds();
    s.values["dispatcher_rss_mb"] = static_cast<double>(dispatcher.max_rss_kb) / 1024.0;
    s.values["workers_cpu_s"] = workers_cpu;
    s.values["mysql_cpu_s"] = cpu_after.mysql - cpu_before.mysql;
    s.values["redis_cpu_s"] = cpu_after.redis - cpu_before.redis;
    s.values["mysql_cpu_s_per_million"] =
        s.values["mysql_cpu_s"] * 1e6 / static_cast<double>(completed);
    s.values["row_updates_per_task"] =
        static_cast<double>(updated) / static_cast<double>(completed);
    for (const auto& name : kStatementCounters) {
        s.values[lowercase(name) + "_per_task"] =
            static_cast<double>(statements_after.at(name) - statements_before.at(name)) /
            static_cast<double>(completed);
    }
    std::ostringstream line;
    line << std::fixed << std::setprecision(1);
    line << spec.bench << " " << config << " rep " << rep << ": " << completed << " tasks in "
         << seconds << " s = " << std::setprecision(0) << s.values["tasks_per_s"]
         << std::setprecision(1) << " tasks/s; rows still status 0: " << left
         << "; CPU s: dispatcher " << dispatcher.cpu_seconds() << ", workers " << workers_cpu
         << ", MariaDB " << s.values["mysql_cpu_s"] << ", Redis " << s.values["redis_cpu_s"]
         << "; row updates per task " << std::setprecision(2) << s.values["row_updates_per_task"];
    progress(line.str());
    ctx.record(s);
    return s;
}

Sample run_worker_drain(Context& ctx, const EndToEndSpec& spec, int rep) {
    ctx.redis().command({"FLUSHALL"});
    const auto& keys = bench_keys();
    ctx.redis().command({"HSET", keys.meta, "values", "status", "lease", "5m", "table", "none"});
    constexpr std::int64_t kChunk = 1000;
    for (std::int64_t first = 1; first <= spec.rows; first += kChunk) {
        std::vector<std::string> push{"RPUSH", keys.ready};
        for (auto id = first; id < std::min(first + kChunk, spec.rows + 1); ++id) {
            push.push_back(std::to_string(id) + ":0123456789ABCDEF-1-" + std::to_string(id));
        }
        ctx.redis().command(push);
    }
    const std::string config = label(spec);
    const auto cpu_before = ctx.server_cpu();
    const double start = now_seconds();
    std::vector<std::unique_ptr<ChildProcess>> workers;
    for (int p = 0; p < spec.processes; ++p) {
        workers.push_back(start_worker(
            ctx, spec.sdk,
            {"--redis-host", ctx.env().redis_host, "--redis-port",
             std::to_string(ctx.env().redis_port), "--threads", std::to_string(spec.threads),
             "--batch", std::to_string(spec.worker_batch), "--handler-ms",
             std::to_string(spec.handler_ms)},
            "noop",
            ctx.path("logs/drain-" + config + "-rep" + std::to_string(rep) + "-worker" +
                     std::to_string(p) + ".log")));
    }
    std::int64_t done = 0;
    double seconds = 0;
    for (;;) {
        done = ctx.redis().command({"LLEN", keys.done}).integer();
        seconds = now_seconds() - start;
        if (done >= spec.rows || seconds >= spec.time_limit_s) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const auto cpu_after = ctx.server_cpu();
    double workers_cpu = 0;
    for (auto& w : workers) w->signal(SIGTERM);
    for (auto& w : workers) {
        w->stop(kGrace);
        workers_cpu += w->usage().cpu_seconds();
    }
    Sample s{"drain", config, rep, {}};
    s.values["completed"] = static_cast<double>(done);
    s.values["seconds"] = seconds;
    s.values["tasks_per_s"] = static_cast<double>(done) / seconds;
    s.values["workers_cpu_s"] = workers_cpu;
    s.values["redis_cpu_s"] = cpu_after.redis - cpu_before.redis;
    std::ostringstream line;
    line << std::fixed << std::setprecision(1) << "drain " << config << " rep " << rep << ": "
         << done << " tasks in " << seconds << " s = " << std::setprecision(0)
         << s.values["tasks_per_s"] << std::setprecision(1) << " tasks/s; CPU s: workers "
         << workers_cpu << ", Redis " << s.values["redis_cpu_s"];
    progress(line.str());
    ctx.record(s);
    return s;
}

Sample run_latency(Context& ctx, const LatencySpec& spec, int rep) {
    create_timed_table(ctx.db(), ctx.indexes());
    ctx.reset_and_settle();
    QueueSpec q = bench_queue();
    q.table = "timed_tasks";
    q.id = "id";
    q.due = "status = 0 AND due_at <= NOW(6)";
    q.order_by = "due_at";
    q.lease = "1m";
    q.on_success = "status = 1, started_at = FROM_UNIXTIME(:started)";
    q.poll_min = spec.poll_min;
    q.claim = spec.claim;
    const std::string config = "poll_min=" + spec.poll_min +
                               (spec.inserts == "scheduled" ? "" : " " + spec.inserts) +
                               (spec.claim == "mysql" ? "" : " claim=" + spec.claim);
    const auto file = ctx.write_config(q, "latency.yaml");
    const auto rows = static_cast<std::int64_t>(spec.rate * spec.seconds);

    // The SDK's default batch (adaptive).
    Fleet fleet(ctx, file, "logs/latency-" + config + "-rep" + std::to_string(rep), spec.processes,
                spec.threads, 0, "latency");
    // Rows are inserted once the dispatcher and workers run, so they meet warm processes.
    constexpr int kLeadMs = 1000;
    if (spec.inserts == "scheduled") {
        schedule_timed_rows(ctx.db(), rows, spec.rate, kLeadMs);
    } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(kLeadMs));
        insert_due_rows(ctx, rows, spec.rate, spec.inserts == "nudged");
    }
    const double start = now_seconds();
    const auto [completed, seconds] =
        time_until_completed(ctx, fleet, rows, start, spec.seconds + 1 + 30);
    testing::ResourceUsage dispatcher;
    double workers_cpu = 0;
    fleet.stop(dispatcher, workers_cpu);

    auto latencies = int_column(
        ctx.db(),
        "SELECT TIMESTAMPDIFF(MICROSECOND, due_at, started_at) FROM timed_tasks, "
        "(SELECT MIN(due_at) AS first FROM timed_tasks) AS f WHERE started_at IS NOT NULL "
        "AND due_at >= f.first + INTERVAL " +
            std::to_string(spec.warmup_seconds) + " SECOND");
    std::sort(latencies.begin(), latencies.end());
    Sample s{"latency", config, rep, {}};
    s.values["rows"] = static_cast<double>(rows);
    s.values["completed"] = static_cast<double>(completed);
    s.values["counted"] = static_cast<double>(latencies.size());
    s.values["p50_ms"] = percentile(latencies, 0.50) / 1000.0;
    s.values["p99_ms"] = percentile(latencies, 0.99) / 1000.0;
    s.values["max_ms"] = latencies.empty() ? 0 : static_cast<double>(latencies.back()) / 1000.0;
    s.values["min_ms"] = latencies.empty() ? 0 : static_cast<double>(latencies.front()) / 1000.0;
    std::ostringstream line;
    line << std::fixed << std::setprecision(1);
    line << "latency " << config << " rep " << rep << ": " << completed << "/" << rows
         << " done; due->start over " << latencies.size() << " rows: p50 " << s.values["p50_ms"]
         << " ms, p99 " << s.values["p99_ms"] << " ms, max " << s.values["max_ms"] << " ms";
    progress(line.str());
    ctx.record(s);
    return s;
}

Sample run_row_claim_baseline(Context& ctx, const BaselineSpec& spec, int rep) {
    // The index its own SELECT by token needs, and no other: it never reads rp_lease_until.
    create_task_table(ctx.db(), spec.table_rows, {"token"});
    ctx.reset_and_settle();
    const std::string config = std::to_string(spec.threads) + " threads";
    const auto log = ctx.path("logs/baseline-rep" + std::to_string(rep) + ".log");
    const auto cpu_before = ctx.server_cpu();
    ChildProcess child({ctx.programs().row_claim_baseline, "--table", "tasks", "--threads",
                        std::to_string(spec.threads), "--rows", std::to_string(spec.rows),
                        "--seconds", std::to_string(spec.seconds)},
                       log_to(log));
    child.wait(std::chrono::seconds(spec.seconds + 60));
    const auto status = child.stop(kGrace);
    const auto cpu_after = ctx.server_cpu();
    const auto result = last_line_with(log, "done=");
    if (!status.success() || result.empty()) {
        throw std::runtime_error("the per-worker claim baseline failed; see " + log);
    }
    Sample s{"baseline", config, rep, {}};
    s.values["done"] = field(result, "done");
    s.values["seconds"] = field(result, "seconds");
    s.values["tasks_per_s"] = field(result, "tasks_per_s");
    s.values["errors"] = field(result, "errors");
    s.values["mysql_cpu_s"] = cpu_after.mysql - cpu_before.mysql;
    progress("baseline " + config + " rep " + std::to_string(rep) + ": " + result);
    ctx.record(s);
    return s;
}

}  // namespace rowpump::bench
