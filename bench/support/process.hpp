#pragma once

// Child processes whose CPU time and peak memory the benchmarks report, and CPU time of
// processes we did not start (the servers), read from procfs.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rowpump::bench {

// From wait4(): what the child used over its whole life.
struct Usage {
    double user_seconds = 0;
    double system_seconds = 0;
    long max_rss_kb = 0;
    int wait_status = 0;
    bool killed = false;  // did not stop within its grace period: got SIGKILL

    double cpu_seconds() const { return user_seconds + system_seconds; }
    bool clean_exit() const;
    std::string describe() const;  // "exit 0", "signal 9", plus " after SIGKILL"
};

class Child {
public:
    // Starts argv[0] (a path) with stdout and stderr appended to log_path. Throws
    // std::runtime_error if it cannot be started.
    Child(std::vector<std::string> argv, const std::string& log_path);
    ~Child();  // SIGKILL and reap if still running
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    pid_t pid() const { return pid_; }
    const std::string& name() const { return argv_.front(); }
    bool running();
    // SIGTERM, `grace` to exit, then SIGKILL.
    Usage stop(std::chrono::milliseconds grace);
    // Waits up to `limit` for the child to exit on its own, then stops it.
    Usage wait(std::chrono::milliseconds limit, std::chrono::milliseconds grace);

private:
    bool reap(bool block);

    std::vector<std::string> argv_;
    pid_t pid_ = -1;
    std::optional<Usage> usage_;
};

// utime + stime of any process, from /proc/PID/stat; nullopt if it is gone.
std::optional<double> process_cpu_seconds(pid_t pid);

// Seconds on a monotonic clock, for timing.
double now_seconds();

}  // namespace rowpump::bench
