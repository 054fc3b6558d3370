// A worker for the end-to-end benchmarks, built on the worker SDK.
//
//   --mode noop      reports ok with status=1 at once (throughput: the handler costs nothing,
//                    or --handler-ms N milliseconds of sleep)
//   --mode latency   reports ok with started=<wall clock at handler start, seconds.micros>,
//                    which the queue's on_success stores; the driver compares it to due_at
//
// SIGTERM or SIGINT: stop fetching, finish the tasks in hand, exit. --time-limit is a
// backstop so that a forgotten worker never runs for ever.

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "rowpump/testing/bench_options.hpp"
#include "rowpump/testing/worker_main.hpp"
#include "rowpump/worker.hpp"

namespace {

struct Args {
    rowpump::WorkerOptions options;
    std::string mode = "noop";
    int handler_ms = 0;
    int time_limit_s = 600;
};

std::string wall_clock_text() {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    char text[32];
    std::snprintf(text, sizeof text, "%lld.%06lld", static_cast<long long>(us / 1000000),
                  static_cast<long long>(us % 1000000));
    return text;
}

Args parse_args(int argc, char** argv) {
    Args args;
    args.options.queue = "bench";
    CLI::App app{"rowpump benchmark worker"};
    app.add_option("--redis-host", args.options.redis.host);
    app.add_option("--redis-port", args.options.redis.port)->required();
    app.add_option("--queue", args.options.queue);
    rowpump::testing::add_threads_option(app, args.options.threads);
    app.add_option("--batch", args.options.batch, "tasks per Redis round trip (0: adaptive)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--handler-ms", args.handler_ms, "noop: sleep this long in the handler")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--mode", args.mode)->check(CLI::IsMember({"noop", "latency"}));
    rowpump::testing::add_time_limit_option(app, args.time_limit_s);
    rowpump::testing::parse_or_exit(app, argc, argv);
    return args;
}

}  // namespace

int main(int argc, char** argv) try {
    const Args args = parse_args(argc, argv);
    const sigset_t signals = rowpump::testing::block_stop_signals(args.time_limit_s);
    rowpump::Worker worker(args.options);
    const bool latency = args.mode == "latency";
    const auto handler_time = std::chrono::milliseconds(args.handler_ms);
    return rowpump::testing::serve_until_signal(
        worker,
        [latency, handler_time](const rowpump::Task&) {
            if (latency) return rowpump::Outcome::success({{"started", wall_clock_text()}});
            if (handler_time.count() > 0) std::this_thread::sleep_for(handler_time);
            return rowpump::Outcome::success({{"status", "1"}});
        },
        signals, "e2e_worker");
} catch (const std::exception& e) {
    std::cerr << "e2e_worker: " << e.what() << "\n";
    return 2;
}
