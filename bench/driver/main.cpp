// rowpump_bench: runs the benchmarks against the servers named by the ROWPUMP_* variables
// (scripts/servers.sh writes them; scripts/bench.sh starts the servers and calls this), and
// prints the summary as markdown. Repetitions are interleaved (rowpump, bare loop, rowpump,
// ...) so that load from elsewhere on the machine hits both sides of a ratio alike.
//
//   rowpump_bench --run-dir DIR [--phases dispatch,e2e,latency,baseline] [--reps 3] ...
//   rowpump_bench --run-dir DIR --phases scale [--scale-rows 1000000,10000000] ...
//   rowpump_bench --run-dir DIR --phases scrape [--reps 3] ...
//   rowpump_bench --run-dir DIR --phases fair [--reps 3] [--fair-noisy-rows 1000000] ...

#include <sys/stat.h>

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include "driver/benchmarks.hpp"
#include "driver/report.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/testing/bench_options.hpp"

namespace {

using namespace rowpump::bench;

struct Options {
    std::string run_dir;
    std::string rowpump = ROWPUMP_BENCH_ROWPUMP;
    std::vector<std::string> indexes{"lease"};
    std::vector<std::string> phases{"dispatch", "e2e", "latency", "baseline"};
    int reps = 3;
    std::int64_t rows = 1000000;
    std::vector<int> batches{100, 1000, 5000};
    int dispatch_time_limit = 120;
    int restart_diagnostic_batch = 0;  // 0: skip (the dispatcher no longer restarts sweeps)
    std::int64_t small_rows = 0;       // 0: skip
    std::vector<std::string> e2e_configs{"4x8", "4x8x16", "4x8x1", "2x4x16"};
    std::vector<int> e2e_payloads{0};  // payload columns, each config run with each in turn
    EndToEndSpec e2e;
    LatencySpec latency;
    std::vector<std::string> latency_polls{"50ms", "10ms"};
    std::vector<std::string> latency_inserts{"scheduled", "live", "nudged"};
    std::vector<std::string> latency_claims{"mysql"};
    BaselineSpec baseline;
    ScaleSpec scale;
    std::string scale_workers = "4x8";
    ScrapeSpec scrape;
    FairSpec fair;
};

bool has(const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

std::pair<int, int> processes_threads(const std::string& config) {
    const auto x = config.find('x');
    if (x == std::string::npos) throw std::runtime_error("expected PROCESSESxTHREADS: " + config);
    return {std::stoi(config.substr(0, x)), std::stoi(config.substr(x + 1))};
}

// "[SDK:]PROCESSESxTHREADS[xBATCH][+MSms][@CLAIM]": the workers' SDK (default: cpp; python,
// python-async, node), their batch (default: the SDK's, adaptive), how long their handler
// sleeps (default: not at all) and the queue's claim mode (default: mysql).
void set_workers(EndToEndSpec& spec, std::string config) {
    const auto colon = config.find(':');
    if (colon != std::string::npos) {
        spec.sdk = config.substr(0, colon);
        if (spec.sdk != "cpp" && spec.sdk != "python" && spec.sdk != "python-async" &&
            spec.sdk != "node") {
            throw std::runtime_error("expected cpp:, python:, python-async: or node: " + config);
        }
        config = config.substr(colon + 1);
    }
    const auto at = config.find('@');
    if (at != std::string::npos) {
        spec.claim = config.substr(at + 1);
        if (spec.claim != "mysql" && spec.claim != "redis") {
            throw std::runtime_error("expected @mysql or @redis: " + config);
        }
        config = config.substr(0, at);
    }
    const auto plus = config.find('+');
    spec.handler_ms = plus == std::string::npos ? 0 : std::stoi(config.substr(plus + 1));
    config = config.substr(0, plus);
    const auto second = config.find('x', config.find('x') + 1);
    std::tie(spec.processes, spec.threads) = processes_threads(config.substr(0, second));
    spec.worker_batch = second == std::string::npos ? 0 : std::stoi(config.substr(second + 1));
}

void run_dispatch(Context& ctx, const Options& o) {
    for (int rep = 1; rep <= o.reps; ++rep) {
        for (int batch : o.batches) {
            run_dispatcher(ctx, o.rows, batch, o.dispatch_time_limit, rep);
            run_bare_loop(ctx, o.rows, batch, 0, o.dispatch_time_limit, rep);
        }
        if (o.restart_diagnostic_batch > 0) {
            run_bare_loop(ctx, o.rows, o.restart_diagnostic_batch, 1000, o.dispatch_time_limit,
                          rep);
        }
        if (o.small_rows > 0) {  // a short run: start-up and steady state weigh differently
            run_dispatcher(ctx, o.small_rows, 1000, o.dispatch_time_limit, rep, "_small");
            run_bare_loop(ctx, o.small_rows, 1000, 0, o.dispatch_time_limit, rep, "_small");
        }
    }
}

// C and D together, interleaved, so the ratio between them comes from the same conditions.
void run_end_to_end_and_baseline(Context& ctx, const Options& o) {
    for (int rep = 1; rep <= o.reps; ++rep) {
        if (has(o.phases, "e2e")) {
            for (const auto& config : o.e2e_configs) {
                for (int payload : o.e2e_payloads) {
                    EndToEndSpec spec = o.e2e;
                    set_workers(spec, config);
                    spec.payload = payload;
                    spec.payload_table = o.e2e_payloads != std::vector<int>{0};
                    run_end_to_end(ctx, spec, rep);
                }
            }
        }
        if (has(o.phases, "drain")) {
            for (const auto& config : o.e2e_configs) {
                EndToEndSpec spec = o.e2e;
                set_workers(spec, config);
                run_worker_drain(ctx, spec, rep);
            }
        }
        if (has(o.phases, "baseline")) run_row_claim_baseline(ctx, o.baseline, rep);
    }
}

void run_latency_phase(Context& ctx, const Options& o) {
    for (int rep = 1; rep <= o.reps; ++rep) {
        for (const auto& poll : o.latency_polls) {
            for (const auto& inserts : o.latency_inserts) {
                for (const auto& claim : o.latency_claims) {
                    LatencySpec spec = o.latency;
                    spec.poll_min = poll;
                    spec.inserts = inserts;
                    spec.claim = claim;
                    run_latency(ctx, spec, rep);
                }
            }
        }
    }
}

void run_scale_phase(Context& ctx, const Options& o) {
    ScaleSpec spec = o.scale;
    set_workers(spec.e2e, o.scale_workers);
    for (int rep = 1; rep <= o.reps; ++rep) run_scale(ctx, spec, rep);
}

// Without and with group_by in turn, so the rate ratio comes from the same minutes.
void run_fair_phase(Context& ctx, const Options& o) {
    for (int rep = 1; rep <= o.reps; ++rep) {
        run_fairness(ctx, o.fair, false, rep);
        run_fairness(ctx, o.fair, true, rep);
    }
}

void run_scrape_phase(Context& ctx, const Options& o) {
    for (int rep = 1; rep <= o.reps; ++rep) run_scrape(ctx, o.scrape, rep);
}

Options parse_options(int argc, char** argv) {
    Options o;
    std::string latency_workers = "2x4";
    std::string fair_workers = "2x4";
    CLI::App app{"rowpump benchmarks (see docs/benchmarks.md)"};
    app.add_option("--run-dir", o.run_dir, "configs, logs and results go here")->required();
    app.add_option("--rowpump", o.rowpump, "the rowpump executable to measure");
    app.add_option("--indexes", o.indexes,
                   "rowpump's indexes on the tables: lease (what migrate adds); token,lease or "
                   "token for older dispatchers")
        ->delimiter(',');
    app.add_option("--phases", o.phases,
                   "dispatch, e2e, latency, baseline; drain (workers alone, on the e2e configs "
                   "and rows), scale (dispatch and e2e on --scale-rows tables) and scrape "
                   "(dispatch with and without 50 HTTP scrapes a second): not part of the "
                   "default run")
        ->delimiter(',');
    app.add_option("--reps", o.reps, "repetitions of each measurement");
    app.add_option("--rows", o.rows, "rows in the dispatch table");
    app.add_option("--batches", o.batches, "dispatch batch sizes")->delimiter(',');
    app.add_option("--dispatch-time-limit", o.dispatch_time_limit, "seconds per dispatch run");
    app.add_option("--restart-diagnostic-batch", o.restart_diagnostic_batch,
                   "also run the bare loop with a 1 s sweep restart at this batch (0: no)");
    app.add_option(
        "--small-rows", o.small_rows,
        "also compare rowpump and the bare loop on a table this small, batch 1000 (0: no)");
    app.add_option("--e2e-rows", o.e2e.rows);
    app.add_option("--e2e-configs", o.e2e_configs,
                   "[SDK:]PROCESSESxTHREADS[xBATCH][+MSms][@CLAIM],... (SDK: the workers' "
                   "language, cpp (the default), python, python-async or node; BATCH: tasks "
                   "per worker round trip, default the SDK's adaptive one; MS: handler time; "
                   "CLAIM: mysql, the default, or redis)")
        ->delimiter(',');
    app.add_option("--e2e-payloads", o.e2e_payloads,
                   "payload columns sent with each task, 0 or 3 (about 100 bytes), e.g. 0,3: "
                   "each config runs with each in turn, on a table that has the columns")
        ->delimiter(',')
        ->check(CLI::IsMember({0, 3}));
    app.add_option("--e2e-batch", o.e2e.batch);
    app.add_option("--e2e-max-backlog", o.e2e.max_backlog);
    app.add_option("--e2e-time-limit", o.e2e.time_limit_s, "seconds per run");
    app.add_option("--latency-rate", o.latency.rate, "rows due per second");
    app.add_option("--latency-seconds", o.latency.seconds);
    app.add_option("--latency-polls", o.latency_polls, "poll.min values")->delimiter(',');
    app.add_option("--latency-inserts", o.latency_inserts,
                   "scheduled (rows inserted ahead), live (inserted when due), nudged (live, "
                   "each insert followed by a nudge)")
        ->delimiter(',')
        ->check(CLI::IsMember({"scheduled", "live", "nudged"}));
    app.add_option("--latency-workers", latency_workers, "PROCESSESxTHREADS");
    app.add_option("--latency-claims", o.latency_claims, "claim modes: mysql, redis")
        ->delimiter(',')
        ->check(CLI::IsMember({"mysql", "redis"}));
    app.add_option("--baseline-threads", o.baseline.threads);
    app.add_option("--baseline-rows", o.baseline.rows, "stop after this many tasks");
    app.add_option("--baseline-seconds", o.baseline.seconds, "or after this long");
    app.add_option("--baseline-table-rows", o.baseline.table_rows);
    app.add_option("--scale-rows", o.scale.rows,
                   "table sizes of the scale phase, the smallest the reference")
        ->delimiter(',');
    app.add_option("--scale-batch", o.scale.batch, "the scale phase's dispatch batch");
    app.add_option("--scale-workers", o.scale_workers,
                   "the scale phase's end-to-end workers, PROCESSESxTHREADS[xBATCH]");
    app.add_option("--scale-time-limit", o.scale.time_limit_s, "seconds per scale run");
    app.add_option("--scrape-rows", o.scrape.rows, "rows in the scrape phase's table");
    app.add_option("--scrape-batch", o.scrape.batch, "the scrape phase's dispatch batch");
    app.add_option("--scrape-pairs", o.scrape.pairs,
                   "quiet and scraped phases per repetition (the median ratio is reported)");
    app.add_option("--fair-noisy-rows", o.fair.noisy_rows,
                   "the fair phase's noisy key: due rows first in order_by");
    app.add_option("--fair-quiet-keys", o.fair.quiet_keys, "the fair phase's quiet keys");
    app.add_option("--fair-quiet-rows", o.fair.quiet_rows, "rows per quiet key");
    app.add_option("--fair-workers", fair_workers, "the fair phase's workers, PROCESSESxTHREADS");
    app.add_option("--fair-max-backlog", o.fair.max_backlog, "the fair phase's max_backlog");
    app.add_option("--fair-time-limit", o.fair.time_limit_s, "seconds per fair run");
    app.add_option("--fair-window", o.fair.window_s,
                   "the fair phase's rates compared: tasks started within this many seconds");
    rowpump::testing::parse_or_exit(app, argc, argv);
    std::tie(o.latency.processes, o.latency.threads) = processes_threads(latency_workers);
    std::tie(o.fair.processes, o.fair.threads) = processes_threads(fair_workers);
    return o;
}

}  // namespace

int main(int argc, char** argv) try {
    const Options o = parse_options(argc, argv);
    ::mkdir(o.run_dir.c_str(), 0755);
    ::mkdir((o.run_dir + "/logs").c_str(), 0755);
    rowpump::MysqlThread mysql_thread;
    Context ctx(rowpump::testing::server_env_from_environment(),
                Programs{o.rowpump, ROWPUMP_BENCH_BARE_DISPATCH, ROWPUMP_BENCH_E2E_WORKER,
                         ROWPUMP_BENCH_ROW_CLAIM, ROWPUMP_BENCH_SOURCE_DIR},
                o.run_dir);
    ctx.set_indexes(o.indexes);
    if (has(o.phases, "dispatch")) run_dispatch(ctx, o);
    if (has(o.phases, "e2e") || has(o.phases, "drain") || has(o.phases, "baseline")) {
        run_end_to_end_and_baseline(ctx, o);
    }
    if (has(o.phases, "latency")) run_latency_phase(ctx, o);
    if (has(o.phases, "scale")) run_scale_phase(ctx, o);
    if (has(o.phases, "scrape")) run_scrape_phase(ctx, o);
    if (has(o.phases, "fair")) run_fair_phase(ctx, o);

    const std::string summary = markdown_summary(ctx.samples(), Targets{});
    std::ofstream(ctx.path("summary.md")) << summary;
    std::cout << summary;
    return 0;
} catch (const std::exception& e) {
    std::cerr << "rowpump_bench: " << e.what() << "\n";
    return 1;
}
