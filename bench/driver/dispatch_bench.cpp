// Benchmarks A and B: rows/s from MySQL to the ready list, rowpump vs the bare loop.

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <map>
#include <sstream>
#include <thread>

#include "driver/benchmarks.hpp"
#include "driver/tables.hpp"

namespace rowpump::bench {

namespace {

const char* const kReady = "rowpump:{user_block_check}:ready";
constexpr std::chrono::milliseconds kPollEvery{5};
constexpr std::chrono::milliseconds kGrace{10000};

QueueSpec dispatch_queue(std::int64_t rows, int batch) {
    QueueSpec q = bench_queue();
    q.name = "user_block_check";
    q.table = "user_block_status";
    q.id = "user_id";
    q.due = "updated_time < NOW(3) - INTERVAL 10 SECOND";
    q.order_by = "updated_time";
    q.batch = batch;
    q.lease = "1h";                                         // no claim expires during a run
    q.max_backlog = std::max<std::int64_t>(rows, 2000000);  // never the limit
    return q;
}

struct Timed {
    std::int64_t moved = 0;
    double seconds = 0;
    bool finished = false;
    std::map<int, std::int64_t> moved_at;  // mark (s) -> rows moved by then
};

void note_marks(Timed& t, std::int64_t rows) {
    for (int mark : kProgressMarks) {
        if (t.seconds >= mark || t.moved >= rows) t.moved_at.emplace(mark, t.moved);
    }
}

// Polls LLEN until it reaches `rows`, the limit passes, or the child exits and the list
// stops growing.
Timed time_until_moved(Context& ctx, ChildProcess& child, std::int64_t rows, double start,
                       int time_limit_s) {
    Timed t;
    for (;;) {
        const bool alive = child.running();
        t.moved = ctx.list_length(kReady);
        t.seconds = now_seconds() - start;
        note_marks(t, rows);
        if (t.moved >= rows) {
            t.finished = true;
            return t;
        }
        if (!alive || t.seconds >= time_limit_s) return t;
        std::this_thread::sleep_for(kPollEvery);
    }
}

Sample finish_sample(std::string bench, std::string config, int rep, std::int64_t rows,
                     const Timed& t, const testing::ResourceUsage& usage, const ServerCpu& before,
                     const ServerCpu& after) {
    Sample s{std::move(bench), std::move(config), rep, {}};
    s.values["rows_moved"] = static_cast<double>(t.moved);
    s.values["table_rows"] = static_cast<double>(rows);
    s.values["seconds"] = t.seconds;
    s.values["finished"] = t.finished ? 1 : 0;
    s.values["rows_per_s"] = static_cast<double>(t.moved) / t.seconds;
    for (const auto& [mark, moved] : t.moved_at) {
        s.values[progress_key(mark)] = static_cast<double>(moved);
    }
    s.values["cpu_s"] = usage.cpu_seconds();
    s.values["user_s"] = usage.user_seconds;
    s.values["sys_s"] = usage.system_seconds;
    s.values["cpu_pct"] = 100.0 * usage.cpu_seconds() / t.seconds;
    s.values["max_rss_mb"] = static_cast<double>(usage.max_rss_kb) / 1024.0;
    s.values["mysql_cpu_s"] = after.mysql - before.mysql;
    s.values["redis_cpu_s"] = after.redis - before.redis;
    std::ostringstream line;
    line << std::fixed << std::setprecision(1);
    line << s.bench << " " << s.config << " rep " << rep << ": " << t.moved << " rows in "
         << t.seconds << " s = " << std::setprecision(0) << s.values["rows_per_s"]
         << std::setprecision(1) << " rows/s" << (t.finished ? "" : " (time limit; not finished)")
         << ", CPU " << usage.cpu_seconds() << " s (" << s.values["cpu_pct"] << "%), RSS "
         << s.values["max_rss_mb"] << " MB, MariaDB CPU " << s.values["mysql_cpu_s"] << " s";
    progress(line.str());
    return s;
}

void prepare(Context& ctx, std::int64_t rows) {
    const double start = now_seconds();
    create_dispatch_table(ctx.db(), rows, ctx.indexes());
    log_load(rows, now_seconds() - start);
    ctx.reset_and_settle();
}

}  // namespace

Sample run_dispatcher(Context& ctx, std::int64_t rows, int batch, int time_limit_s, int rep,
                      const std::string& suffix, const std::string& note) {
    prepare(ctx, rows);
    const std::string bench = "dispatch" + suffix;
    const std::string config = "batch=" + std::to_string(batch) + note;
    const auto file = ctx.write_config(dispatch_queue(rows, batch), "dispatch-" + config + ".yaml");
    const auto cpu_before = ctx.server_cpu();
    const double start = now_seconds();
    ChildProcess child(
        {ctx.programs().rowpump, "run", "-c", file, "--log-level", "warn"},
        log_to(ctx.path("logs/" + bench + "-" + config + "-rep" + std::to_string(rep) + ".log")));
    const Timed t = time_until_moved(ctx, child, rows, start, time_limit_s);
    const auto cpu_after = ctx.server_cpu();
    const bool died = !child.running();  // before the end of the measurement
    const auto status = child.stop(kGrace);
    if (died) progress("rowpump run ended on its own (" + status.describe() + "); see its log");
    Sample s = finish_sample(bench, config, rep, rows, t, child.usage(), cpu_before, cpu_after);
    ctx.record(s);
    return s;
}

Sample run_bare_loop(Context& ctx, std::int64_t rows, int batch, int sweep_restart_ms,
                     int time_limit_s, int rep, const std::string& suffix) {
    prepare(ctx, rows);
    const std::string bench = (sweep_restart_ms > 0 ? "bare_restart" : "bare") + suffix;
    const std::string config = "batch=" + std::to_string(batch);
    const auto file = ctx.write_config(dispatch_queue(rows, batch), "bare-" + config + ".yaml");
    const auto cpu_before = ctx.server_cpu();
    const double start = now_seconds();
    ChildProcess child(
        {ctx.programs().bare_dispatch, "-c", file, "--rows", std::to_string(rows),
         "--sweep-restart-ms", std::to_string(sweep_restart_ms), "--time-limit",
         std::to_string(time_limit_s)},
        log_to(ctx.path("logs/" + bench + "-" + config + "-rep" + std::to_string(rep) + ".log")));
    const Timed t = time_until_moved(ctx, child, rows, start, time_limit_s);
    const auto cpu_after = ctx.server_cpu();
    child.wait(kGrace);
    child.stop(kGrace);
    Sample s = finish_sample(bench, config, rep, rows, t, child.usage(), cpu_before, cpu_after);
    ctx.record(s);
    return s;
}

}  // namespace rowpump::bench
