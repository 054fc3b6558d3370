// rowpump_chaos_worker: the C++ SDK's worker for the chaos run (chaos_worker.py and
// chaos-worker.js are the Python and Node.js ones; all three write the same ledger). Its handler
// appends one line per run to a ledger file of its own, `<queue> <id> <token> <pid> <unix µs>
// <outcome>`, with one write(2) on an O_APPEND descriptor: a line written is on disk whatever
// happens to the process next (kill -9 included), and lines never interleave. The outcome is
// the one planned for the task (planned_outcome(), workload.hpp: a few `once` rows retry on
// their first attempt or fail); a success reports `claim=<token>`, which the queue's on_success
// appends to the row, so the verdict knows which runs were applied. The keyed queue's handler
// runs for kKeyedHandlerMs and then appends `<queue> <id> <token> <pid> <unix µs> end`.
//
// SIGTERM or SIGINT: stop fetching, finish the tasks in hand, exit 0.

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "rowpump/testing/bench_options.hpp"
#include "rowpump/testing/worker_main.hpp"
#include "rowpump/worker.hpp"
#include "workload.hpp"

namespace {

struct Args {
    rowpump::WorkerOptions options;
    std::string ledger;
    int time_limit_s = 3600;
};

Args parse_args(int argc, char** argv) {
    Args args;
    CLI::App app{"rowpump chaos worker"};
    app.add_option("--redis-port", args.options.redis.port)->required();
    app.add_option("--queue", args.options.queue)->required();
    app.add_option("--worker-id", args.options.worker_id)->required();
    app.add_option("--ledger", args.ledger, "file the handler appends each run to")->required();
    rowpump::testing::add_threads_option(app, args.options.threads);
    app.add_option("--batch", args.options.batch)->check(CLI::PositiveNumber);
    int ttl_ms = 3000;
    app.add_option("--heartbeat-ttl-ms", ttl_ms)->check(CLI::PositiveNumber);
    rowpump::testing::add_time_limit_option(app, args.time_limit_s);
    rowpump::testing::parse_or_exit(app, argc, argv);
    args.options.heartbeat_ttl = std::chrono::milliseconds(ttl_ms);
    args.options.log = [](const std::string& line) { std::cerr << line << "\n"; };
    return args;
}

class Ledger {
public:
    explicit Ledger(const std::string& path)
        : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
        if (fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    }
    ~Ledger() { ::close(fd_); }
    Ledger(const Ledger&) = delete;
    Ledger& operator=(const Ledger&) = delete;

    void record(const std::string& queue, const rowpump::Task& task,
                const std::string& outcome) const {
        const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
        const std::string line = queue + " " + task.id + " " + task.token + " " +
                                 std::to_string(::getpid()) + " " + std::to_string(micros) + " " +
                                 outcome + "\n";
        if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
            throw std::runtime_error("cannot write the ledger: " +
                                     std::string(std::strerror(errno)));
        }
    }

private:
    int fd_;
};

}  // namespace

int main(int argc, char** argv) try {
    const Args args = parse_args(argc, argv);
    const sigset_t signals = rowpump::testing::block_stop_signals(args.time_limit_s);
    const Ledger ledger(args.ledger);
    rowpump::Worker worker(args.options);
    return rowpump::testing::serve_until_signal(
        worker,
        [&](const rowpump::Task& task) {
            using rowpump::chaos::Planned;
            const Planned planned =
                rowpump::chaos::planned_outcome(args.options.queue, task.id, task.attempt);
            ledger.record(args.options.queue, task, rowpump::chaos::planned_name(planned));
            if (args.options.queue == rowpump::chaos::kKeyedQueue) {
                std::this_thread::sleep_for(
                    std::chrono::milliseconds(rowpump::chaos::kKeyedHandlerMs));
                ledger.record(args.options.queue, task, "end");
            }
            switch (planned) {
                case Planned::retry:
                    return rowpump::Outcome::retry("chaos: retries on purpose",
                                                   std::chrono::milliseconds(200));
                case Planned::fail:
                    return rowpump::Outcome::fail("chaos: fails on purpose");
                case Planned::ok:
                    break;
            }
            return rowpump::Outcome::success({{"claim", task.token}});
        },
        signals, "rowpump_chaos_worker");
} catch (const std::exception& e) {
    std::cerr << "rowpump_chaos_worker: " << e.what() << "\n";
    return 2;
}
