#include "driver/fleet.hpp"

#include <signal.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace rowpump::bench {

namespace {

constexpr std::chrono::milliseconds kPollEvery{20};
constexpr int kWorkerTimeMargin = 60;

}  // namespace

const protocol::Keys& bench_keys() {
    static const protocol::Keys keys = protocol::keys_for(bench_queue().name);
    return keys;
}

std::vector<std::int64_t> int_column(testing::MysqlClient& db, const std::string& query) {
    std::vector<std::int64_t> values;
    for (const auto& text : db.column(query)) values.push_back(text.empty() ? 0 : std::stoll(text));
    return values;
}

double percentile(const std::vector<std::int64_t>& sorted, double p) {
    if (sorted.empty()) return 0;
    const auto index = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
    return static_cast<double>(sorted[std::min(index, sorted.size() - 1)]);
}

std::unique_ptr<ChildProcess> start_worker(Context& ctx, const std::string& sdk,
                                           std::vector<std::string> flags, std::string mode,
                                           const std::string& log) {
    const auto& source = ctx.programs().source_dir;
    std::vector<std::string> argv{ctx.programs().e2e_worker};
    testing::SpawnOptions options = log_to(log);
    if (sdk == "python" || sdk == "python-async") {
        argv = {"/usr/bin/python3", source + "/bench/workers/e2e_worker.py"};
        options.env.emplace_back("PYTHONPATH", source + "/worker-sdk/python");
        options.env.emplace_back("PYTHONDONTWRITEBYTECODE", "1");
        if (sdk == "python-async") mode = "async";
    } else if (sdk == "node") {
        argv = {"node", source + "/bench/workers/e2e_worker.js"};
    }
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--mode", mode});
    return std::make_unique<ChildProcess>(argv, options);
}

Fleet::Fleet(Context& ctx, const std::string& config_file, const std::string& log_prefix,
             int processes, int threads, int batch, const std::string& mode, int handler_ms,
             int time_limit_s, const std::string& sdk) {
    dispatcher =
        std::make_unique<ChildProcess>(std::vector<std::string>{ctx.programs().rowpump, "run", "-c",
                                                                config_file, "--log-level", "warn"},
                                       log_to(ctx.path(log_prefix + "-dispatcher.log")));
    const auto deadline = now_seconds() + 30;
    while (ctx.redis().command({"EXISTS", bench_keys().meta}).integer() == 0) {
        if (!dispatcher->running() || now_seconds() > deadline) {
            throw std::runtime_error("the dispatcher did not announce the queue; see " +
                                     ctx.path(log_prefix + "-dispatcher.log"));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (int p = 0; p < processes; ++p) {
        workers.push_back(start_worker(
            ctx, sdk,
            {"--redis-host", ctx.env().redis_host, "--redis-port",
             std::to_string(ctx.env().redis_port), "--threads", std::to_string(threads), "--batch",
             std::to_string(batch), "--handler-ms", std::to_string(handler_ms), "--time-limit",
             std::to_string(time_limit_s + kWorkerTimeMargin)},
            mode, ctx.path(log_prefix + "-worker" + std::to_string(p) + ".log")));
    }
}

bool Fleet::running() {
    for (auto* child : all()) {
        if (!child->running()) return false;
    }
    return true;
}

std::vector<ChildProcess*> Fleet::all() {
    std::vector<ChildProcess*> children{dispatcher.get()};
    for (auto& w : workers) children.push_back(w.get());
    return children;
}

void Fleet::stop(testing::ResourceUsage& dispatcher_usage, double& workers_cpu) {
    for (auto* child : all()) {
        if (!child->running()) {
            progress(child->argv().front() + " (pid " + std::to_string(child->pid()) +
                     ") had ended on its own (" + child->stop(kGrace).describe() + ")");
        }
    }
    workers_cpu = 0;
    for (auto& w : workers) w->signal(SIGTERM);
    for (auto& w : workers) {
        w->stop(kGrace);
        workers_cpu += w->usage().cpu_seconds();
    }
    dispatcher->stop(kGrace);
    dispatcher_usage = dispatcher->usage();
}

std::pair<std::int64_t, double> time_until_completed(Context& ctx, Fleet& fleet, std::int64_t rows,
                                                     double start, double limit_s) {
    for (;;) {
        const auto completed = ctx.hash_int(bench_keys().stats, "completed");
        const double seconds = now_seconds() - start;
        if (completed >= rows || seconds >= limit_s || !fleet.running()) {
            return {completed, seconds};
        }
        std::this_thread::sleep_for(kPollEvery);
    }
}

}  // namespace rowpump::bench
