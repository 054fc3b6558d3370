// rowpump_test_worker: the C++ SDK's conformance worker, a worker whose behaviour tests choose
// by flags (every SDK's conformance worker takes the same ones; tests/conformance/ runs them).
//
//   --redis-host H --redis-port P
//   --sentinel HOST:PORT (repeatable) --sentinel-master NAME   Sentinel instead of host/port
//   --cluster HOST:PORT (repeatable)                            Cluster seeds instead
//   --queue Q --threads N --batch B --worker-id ID
//   --heartbeat-ttl-ms MS --queue-wait-ms MS --fetch-timeout-ms MS
//   --work-ms MS                 sleep this long in each task
//   --fail-mode none|retry|fail|throw|hang   what the handler does (none: success; hang:
//                                never returns unless cancelled by the deadline)
//   --retry-delay-ms MS          with --fail-mode retry: the delay it asks for
//   --value NAME=VALUE           sent with success (repeatable)
//   --extend-ms MS               call extend(task, MS) before working
//   --timeout-ms MS              the handler deadline (WorkerOptions::timeout)
//   --log FILE                   one line per handled task, one O_APPEND write:
//                                "<id> <token> <attempt>" then " name=value" per task field
//                                (id and values percent-encoded as on the wire; NULL as a
//                                bare name)
//   --max-tasks N                stop after N handled tasks
//   --fork N                     build the Worker, then fork N children that each run it
//                                (a Worker built before fork()); the parent passes
//                                SIGTERM/SIGINT on, prints "fork: child <i> exit <code>" as
//                                each ends and exits 0 once all have
//
// Prints "worker_id=<id>" on stdout once started. SIGTERM/SIGINT: drain and exit 0.
// Exit 1: the worker failed (unknown queue, ...); exit 2: bad flags.

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "rowpump/worker.hpp"

namespace {

using std::chrono::milliseconds;

struct Args {
    rowpump::WorkerOptions options;
    milliseconds work{0};
    std::string fail_mode = "none";
    std::optional<milliseconds> retry_delay;
    std::map<std::string, std::string> values;
    std::optional<milliseconds> extend;
    std::string log_path;
    long max_tasks = 0;
    int forks = 0;
};

rowpump::RedisEndpoint endpoint(const std::string& flag, const std::string& value) {
    auto colon = value.rfind(':');
    if (colon == std::string::npos || colon == 0) {
        throw std::invalid_argument(flag + " takes HOST:PORT");
    }
    return {value.substr(0, colon), std::stoi(value.substr(colon + 1))};
}

void apply_flag(Args& a, const std::string& flag, const std::string& value) {
    auto ms = [&] { return milliseconds(std::stol(value)); };
    if (flag == "--redis-host")
        a.options.redis.host = value;
    else if (flag == "--redis-port")
        a.options.redis.port = std::stoi(value);
    else if (flag == "--sentinel")
        a.options.redis.sentinels.push_back(endpoint(flag, value));
    else if (flag == "--sentinel-master")
        a.options.redis.master = value;
    else if (flag == "--cluster")
        a.options.redis.cluster.push_back(endpoint(flag, value));
    else if (flag == "--queue")
        a.options.queue = value;
    else if (flag == "--threads")
        a.options.threads = std::stoi(value);
    else if (flag == "--batch")
        a.options.batch = std::stoi(value);
    else if (flag == "--worker-id")
        a.options.worker_id = value;
    else if (flag == "--heartbeat-ttl-ms")
        a.options.heartbeat_ttl = ms();
    else if (flag == "--queue-wait-ms")
        a.options.queue_wait = ms();
    else if (flag == "--fetch-timeout-ms")
        a.options.fetch_timeout = ms();
    else if (flag == "--work-ms")
        a.work = ms();
    else if (flag == "--extend-ms")
        a.extend = ms();
    else if (flag == "--timeout-ms")
        a.options.timeout = ms();
    else if (flag == "--retry-delay-ms")
        a.retry_delay = ms();
    else if (flag == "--log")
        a.log_path = value;
    else if (flag == "--max-tasks")
        a.max_tasks = std::stol(value);
    else if (flag == "--fork")
        a.forks = std::stoi(value);
    else if (flag == "--fail-mode") {
        if (value != "none" && value != "retry" && value != "fail" && value != "throw" &&
            value != "hang") {
            throw std::invalid_argument("--fail-mode takes none, retry, fail, throw or hang");
        }
        a.fail_mode = value;
    } else if (flag == "--value") {
        auto eq = value.find('=');
        if (eq == std::string::npos) throw std::invalid_argument("--value takes NAME=VALUE");
        a.values[value.substr(0, eq)] = value.substr(eq + 1);
    } else {
        throw std::invalid_argument("unknown flag " + flag);
    }
}

Args parse_args(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            throw std::invalid_argument(std::string("missing value after ") + argv[i]);
        apply_flag(a, argv[i], argv[i + 1]);
    }
    return a;
}

// As on the wire: bytes other than [A-Za-z0-9-._~] become %XX.
std::string percent_encoded(const std::string& raw) {
    static const char* const kHex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : raw) {
        const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                           (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
        if (plain) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

// One write() per line with O_APPEND: lines from several threads (and from a worker killed
// with SIGKILL) never interleave or get lost in a buffer.
class TaskLog {
public:
    explicit TaskLog(const std::string& path) {
        if (path.empty()) return;
        fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd_ < 0) throw std::runtime_error("cannot open " + path);
    }
    ~TaskLog() {
        if (fd_ >= 0) close(fd_);
    }
    void record(const rowpump::Task& task) const {
        if (fd_ < 0) return;
        std::string line =
            percent_encoded(task.id) + " " + task.token + " " + std::to_string(task.attempt);
        for (const auto& [name, value] : task.fields) {
            line += " " + name;
            if (value) line += "=" + percent_encoded(*value);
        }
        line += "\n";
        if (write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
            throw std::runtime_error("cannot write the task log");
        }
    }

private:
    int fd_ = -1;
};

rowpump::Outcome outcome_for(const Args& a, const rowpump::Task& task) {
    if (a.fail_mode == "retry")
        return rowpump::Outcome::retry("test worker: retry requested", a.retry_delay);
    if (a.fail_mode == "fail") return rowpump::Outcome::fail("test worker: fail requested");
    if (a.fail_mode == "throw")
        throw std::runtime_error("test worker: handler threw for " + task.id);
    return rowpump::Outcome::success(a.values);
}

// The parent of --fork: starts the children, passes stop signals on, waits for them all.
template <typename Serve>
int run_forked(const Args& a, const Serve& serve) {
    std::map<pid_t, int> children;
    for (int i = 1; i <= a.forks; ++i) {
        const pid_t pid = fork();
        if (pid < 0) throw std::runtime_error("fork failed");
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);  // a test that kills the parent ends us too
            const int code = serve();
            std::fflush(stdout);
            std::fflush(stderr);
            _exit(code);
        }
        children[pid] = i;
    }
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    while (!children.empty()) {
        const timespec poll{0, 50 * 1000 * 1000};
        const int signal = sigtimedwait(&signals, nullptr, &poll);
        if (signal > 0) {
            for (const auto& child : children) kill(child.first, signal);
        }
        int status = 0;
        for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
            const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            std::printf("fork: child %d exit %d\n", children[pid], code);
            std::fflush(stdout);
            children.erase(pid);
        }
    }
    return 0;
}

int serve(const Args& a, rowpump::Worker& worker, const TaskLog& task_log, sigset_t signals);

int run(const Args& a) {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    TaskLog task_log(a.log_path);
    rowpump::Worker worker(a.options);
    std::printf("worker_id=%s\n", worker.worker_id().c_str());
    std::fflush(stdout);
    if (a.forks > 0) return run_forked(a, [&] { return serve(a, worker, task_log, signals); });
    return serve(a, worker, task_log, signals);
}

int serve(const Args& a, rowpump::Worker& worker, const TaskLog& task_log, sigset_t signals) {
    std::atomic<long> handled{0};
    int exit_code = 0;
    std::thread runner([&] {
        try {
            worker.run([&](const rowpump::Task& task) {
                if (a.extend) worker.extend(task, *a.extend);
                if (a.work.count() > 0) std::this_thread::sleep_for(a.work);
                task_log.record(task);
                if (a.max_tasks > 0 && ++handled >= a.max_tasks) worker.stop();
                if (a.fail_mode == "hang") {
                    while (!task.cancelled()) std::this_thread::sleep_for(milliseconds(10));
                    return rowpump::Outcome::retry("test worker: cancelled");
                }
                return outcome_for(a, task);
            });
        } catch (const std::exception& e) {
            std::fprintf(stderr, "rowpump_test_worker: %s\n", e.what());
            exit_code = 1;
        }
        kill(getpid(), SIGTERM);  // wake the main thread when run() ends on its own
    });
    int signal = 0;
    sigwait(&signals, &signal);
    worker.stop();
    runner.join();
    return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
    Args args;
    try {
        args = parse_args(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rowpump_test_worker: %s\n", e.what());
        return 2;
    }
    try {
        return run(args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rowpump_test_worker: %s\n", e.what());
        return 1;
    }
}
