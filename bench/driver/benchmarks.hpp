#pragma once

// The benchmarks the driver runs. Each call is one repetition on a fresh table; it records
// a Sample in the context and returns it.

#include <cstdint>
#include <string>
#include <vector>

#include "driver/context.hpp"

namespace rowpump::bench {

// A: `rowpump run` moves `rows` due rows to the ready list; timed from spawn until LLEN
// reaches `rows`. Records rows/s, CPU (user+sys, and % of wall time) and peak RSS.
// `suffix` is appended to the benchmark's name ("dispatch_small") for extra variants, `note`
// to its configuration label ("batch=1000,rows=10000000").
Sample run_dispatcher(Context& ctx, std::int64_t rows, int batch, int time_limit_s, int rep,
                      const std::string& suffix = "", const std::string& note = "");

// A and B record the rows moved by each of these marks (seconds into the run) as the sample
// value progress_key(mark), so the report shows whether a rate holds during a run.
inline constexpr int kProgressMarks[] = {1, 2, 5, 10, 20, 30, 60, 90, 120};
inline std::string progress_key(int mark) {
    return "moved_at_" + std::to_string(mark) + "s";
}

// B: the bare claim + push loop, same table, same SQL, same timing.
// sweep_restart_ms > 0 also copies the dispatcher's periodic restart of its sweep.
Sample run_bare_loop(Context& ctx, std::int64_t rows, int batch, int sweep_restart_ms,
                     int time_limit_s, int rep, const std::string& suffix = "");

struct EndToEndSpec {
    std::int64_t rows = 1000000;
    int processes = 2;
    int threads = 4;
    int worker_batch = 0;     // WorkerOptions::batch (0: adaptive, the SDK's default)
    int handler_ms = 0;       // the handler sleeps this long (0: returns at once)
    std::string claim;        // the queue's `claim:` mode; empty: not set (the default)
    std::string sdk = "cpp";  // the workers' SDK: cpp, python, python-async or node
    int batch = 1000;         // the queue's claim batch
    std::int64_t max_backlog = 20000;
    int time_limit_s = 300;
    std::string bench = "e2e";  // the sample's benchmark name
    std::string note;           // appended to the configuration label
    // Payload columns the queue sends with each task (0 or 3: create_task_table's
    // kPayloadColumns); with `payload_table` the table has those columns either way, so that
    // runs with and without a payload read the same rows.
    int payload = 0;
    bool payload_table = false;
};
// C: due row -> no-op handler -> outcome applied, until every row is completed in MySQL.
Sample run_end_to_end(Context& ctx, const EndToEndSpec& spec, int rep);

// C (workers alone): `spec.rows` ready messages waiting in Redis, no dispatcher; timed from
// the workers' spawn until the done list holds all of them. What the worker side costs with
// MySQL out of the way.
Sample run_worker_drain(Context& ctx, const EndToEndSpec& spec, int rep);

struct LatencySpec {
    double rate = 500;       // rows becoming due per second
    int seconds = 20;        // for this long
    int warmup_seconds = 2;  // rows due in the first seconds are not counted
    std::string poll_min = "50ms";
    int processes = 2;
    int threads = 4;
    // scheduled: every row inserted ahead with its due_at spread over the run; live: each row
    // inserted when it is due (due_at = NOW(6)), at `rate`; nudged: live, and each insert is
    // followed by PUBLISH rowpump:{q}:nudge.
    std::string inserts = "scheduled";
    std::string claim = "mysql";  // the queue's claim mode, written out
};
// C (latency): due_at -> handler start, p50/p99/max, on a queue that keeps up.
Sample run_latency(Context& ctx, const LatencySpec& spec, int rep);

struct BaselineSpec {
    std::int64_t table_rows = 1000000;
    int threads = 50;
    std::int64_t rows = 20000;
    int seconds = 20;
};
// D: 50 threads each claiming one row at a time straight from MySQL.
Sample run_row_claim_baseline(Context& ctx, const BaselineSpec& spec, int rep);

struct ScrapeSpec {
    std::int64_t rows = 400000;  // enough that the table does not run dry during the phases
    int batch = 25;              // many cycles a second: a loop that waited for scrapes shows
    int pairs = 5;               // quiet and scraped phases of about 600 ms each
};
// Scrapes beside dispatch: `rowpump run` alone (no workers) with `http` on, its dispatch rate
// in phases without scrapes and with 50 a second (/metrics and /api/state in turn),
// alternating. Records both rates and the median of the per-pair ratios.
Sample run_scrape(Context& ctx, const ScrapeSpec& spec, int rep);

struct FairSpec {
    std::int64_t noisy_rows = 1000000;  // key 0's rows, first in order_by
    int quiet_keys = 99;
    int quiet_rows = 100;  // per quiet key
    int processes = 2;     // SDK workers (e2e_worker --mode latency), the SDK's default batch
    int threads = 4;
    int batch = 1000;  // the queue's claim batch
    std::int64_t max_backlog = 20000;
    int time_limit_s = 900;  // per run
    // The rate compared: tasks started within this many seconds of the rows coming due (a
    // run with group_by may end at the time limit; this window is the same for both, unless
    // a run ends within it: then its own span).
    int window_s = 120;
};
// Fair share across keys: `rowpump run` and workers on one table with a noisy key and quiet
// keys, every row due as the fleet starts, until every task is completed (or the limit);
// with `group_by` (tenant_id) or without (config "group_by" / "ordered"). Records the
// due-to-start latency p50/p99/max of the quiet keys' and the noisy key's tasks (due_at to
// handler start), the tasks/s end to end (over the run, and over the first `window_s`), and
// the noisy key's tasks started before the last quiet one.
Sample run_fairness(Context& ctx, const FairSpec& spec, bool group_by, int rep);

struct ScaleSpec {
    // Table sizes; the smallest is the reference the others are compared with.
    std::vector<std::int64_t> rows{1000000, 10000000};
    int batch = 1000;         // the dispatch queue's claim batch (rowpump's default)
    int time_limit_s = 1800;  // per run
    // Workers and queue of C; `rows`, `time_limit_s`, `bench` and `note` are set per run.
    EndToEndSpec e2e;
};
// How cost grows with the table: per repetition, A (`rowpump run` alone) on every size, then
// C on every size, sizes interleaved. Samples "dispatch_scale" and "e2e_scale".
void run_scale(Context& ctx, const ScaleSpec& spec, int rep);

}  // namespace rowpump::bench
