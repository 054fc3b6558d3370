// A noisy key and 99 quiet ones (docs/benchmarks.md, "Fair share across keys"): the same
// table end to end with and without group_by, each task's due-to-start latency per key class
// and the rate, so the cost of the fair share is a ratio measured in the same run.

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <sstream>
#include <tuple>
#include <utility>

#include "driver/benchmarks.hpp"
#include "driver/fleet.hpp"
#include "driver/tables.hpp"

namespace rowpump::bench {

namespace {

// The value at fraction `p` of the sorted latencies (in us) of the rows `where` selects,
// computed in the server (a million rows need not cross the wire); 0 when there are none.
double latency_percentile(testing::MysqlClient& db, const std::string& latency,
                          const std::string& where, std::int64_t count, double p) {
    if (count == 0) return 0;
    const auto offset = static_cast<std::int64_t>(p * static_cast<double>(count - 1) + 0.5);
    return static_cast<double>(db.scalar("SELECT " + latency + " AS l FROM fair_tasks WHERE " +
                                         where + " ORDER BY l LIMIT 1 OFFSET " +
                                         std::to_string(offset)));
}

}  // namespace

Sample run_fairness(Context& ctx, const FairSpec& spec, bool group_by, int rep) {
    const double load_start = now_seconds();
    create_fair_table(ctx.db(), spec.noisy_rows, spec.quiet_keys, spec.quiet_rows, ctx.indexes());
    const std::int64_t rows =
        spec.noisy_rows + static_cast<std::int64_t>(spec.quiet_keys) * spec.quiet_rows;
    log_load(rows, now_seconds() - load_start);
    ctx.reset_and_settle();

    // The rows were loaded with due_at from the load's NOW(6) on; the queue's due expression
    // shifts them by the time since, so that they all come due now, as the fleet starts (the
    // noisy key's in its first second, the quiet keys' right after), however long the load
    // and the settling took. A row's due moment is due_at + lag.
    const std::int64_t lag_us =
        ctx.db().scalar("SELECT TIMESTAMPDIFF(MICROSECOND, MIN(due_at), NOW(6)) FROM fair_tasks");
    const std::string lag = "INTERVAL " + std::to_string(lag_us) + " MICROSECOND";
    QueueSpec q = bench_queue();
    q.table = "fair_tasks";
    q.id = "id";
    q.due = "status = 0 AND due_at <= NOW(6) - " + lag;
    q.order_by = "due_at";
    q.batch = spec.batch;
    q.lease = "5m";
    q.max_backlog = spec.max_backlog;
    q.on_success = "status = 1, started_at = FROM_UNIXTIME(:started)";
    if (group_by) q.extra_lines.push_back("group_by: tenant_id");
    const std::string config = group_by ? "group_by" : "ordered";
    const auto file = ctx.write_config(q, "fair-" + config + ".yaml");

    const auto cpu_before = ctx.server_cpu();
    const double start = now_seconds();
    Fleet fleet(ctx, file, "logs/fair-" + config + "-rep" + std::to_string(rep), spec.processes,
                spec.threads, 0, "latency", 0, spec.time_limit_s);
    const auto [completed, seconds] =
        time_until_completed(ctx, fleet, rows, start, spec.time_limit_s);
    const auto cpu_after = ctx.server_cpu();
    testing::ResourceUsage dispatcher;
    double workers_cpu = 0;
    fleet.stop(dispatcher, workers_cpu);

    const std::string latency = "TIMESTAMPDIFF(MICROSECOND, due_at + " + lag + ", started_at)";
    const std::string quiet = "tenant_id <> 0 AND started_at IS NOT NULL";
    const std::string noisy = "tenant_id = 0 AND started_at IS NOT NULL";
    auto& db = ctx.db();
    const auto quiet_started = db.scalar("SELECT COUNT(*) FROM fair_tasks WHERE " + quiet);
    const auto noisy_started = db.scalar("SELECT COUNT(*) FROM fair_tasks WHERE " + noisy);
    Sample s{"fair", config, rep, {}};
    s.values["rows"] = static_cast<double>(rows);
    s.values["completed"] = static_cast<double>(completed);
    s.values["seconds"] = seconds;
    s.values["finished"] = completed >= rows ? 1 : 0;
    s.values["tasks_per_s"] = static_cast<double>(completed) / seconds;
    s.values["quiet_started"] = static_cast<double>(quiet_started);
    s.values["noisy_started"] = static_cast<double>(noisy_started);
    for (const auto& [name, where, count] :
         {std::tuple{"quiet", quiet, quiet_started}, std::tuple{"noisy", noisy, noisy_started}}) {
        for (const auto& [p, label] :
             {std::pair{0.5, "_p50_ms"}, std::pair{0.99, "_p99_ms"}, std::pair{1.0, "_max_ms"}}) {
            s.values[std::string(name) + label] =
                latency_percentile(db, latency, where, count, p) / 1000.0;
        }
    }
    // How much of the noisy key went ahead of the quiet keys: its tasks started before the
    // last quiet task started (the bound in docs/fairness.md: the ready list's max_backlog
    // plus the claims until a quiet key is visited).
    s.values["noisy_before_last_quiet"] =
        quiet_started == 0
            ? static_cast<double>(noisy_started)
            : static_cast<double>(
                  db.scalar("SELECT COUNT(*) FROM fair_tasks WHERE tenant_id = 0 AND started_at < "
                            "(SELECT MAX(started_at) FROM fair_tasks WHERE tenant_id <> 0)"));
    // Tasks whose handler started within the window after the first row came due.
    s.values["window_s"] = spec.window_s;
    s.values["started_in_window"] = static_cast<double>(
        db.scalar("SELECT COUNT(*) FROM fair_tasks, (SELECT MIN(due_at) + " + lag +
                  " AS first FROM fair_tasks) AS f WHERE started_at <= f.first + INTERVAL " +
                  std::to_string(spec.window_s) + " SECOND"));
    // A run that ended within the window: its rate over its own span.
    s.values["window_tasks_per_s"] =
        s.values["started_in_window"] / std::min<double>(spec.window_s, seconds);
    s.values["dispatcher_cpu_s"] = dispatcher.cpu_seconds();
    s.values["workers_cpu_s"] = workers_cpu;
    s.values["mysql_cpu_s"] = cpu_after.mysql - cpu_before.mysql;
    s.values["redis_cpu_s"] = cpu_after.redis - cpu_before.redis;
    double load[3] = {0, 0, 0};
    if (::getloadavg(load, 3) > 0) s.values["load_1min_end"] = load[0];

    std::ostringstream line;
    line << std::fixed << std::setprecision(1);
    line << "fair " << config << " rep " << rep << ": " << completed << "/" << rows << " tasks in "
         << seconds << " s = " << std::setprecision(0) << s.values["tasks_per_s"] << " tasks/s ("
         << s.values["window_tasks_per_s"] << " in the first " << spec.window_s
         << " s); quiet keys " << quiet_started << " started, due->start p50 "
         << s.values["quiet_p50_ms"] << " ms, p99 " << s.values["quiet_p99_ms"]
         << " ms; noisy key p50 " << s.values["noisy_p50_ms"] << " ms, p99 "
         << s.values["noisy_p99_ms"] << " ms; noisy tasks started before the last quiet one "
         << s.values["noisy_before_last_quiet"] << "; load " << std::setprecision(2) << load[0];
    progress(line.str());
    ctx.record(s);
    return s;
}

}  // namespace rowpump::bench
