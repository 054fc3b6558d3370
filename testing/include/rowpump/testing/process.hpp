#pragma once

// Child processes for tests and benchmarks: servers, the rowpump executable, workers, and
// what they cost.

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rowpump::testing {

using namespace std::chrono_literals;

// How a child ended, from waitpid.
struct ExitStatus {
    int raw = 0;
    bool forced = false;  // did not end within the grace period of stop(): got SIGKILL

    bool exited() const;
    int code() const;  // precondition: exited()
    bool signaled() const;
    int signal() const;  // precondition: signaled()
    bool success() const { return exited() && code() == 0; }
    // "exit code 0", "killed by signal 9 (Killed)", plus " after SIGKILL" when forced
    std::string describe() const;
};

// What a child used over its whole life, from wait4().
struct ResourceUsage {
    double user_seconds = 0;
    double system_seconds = 0;
    long max_rss_kb = 0;

    double cpu_seconds() const { return user_seconds + system_seconds; }
};

struct SpawnOptions {
    std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) ours
    std::string stdout_path;                               // empty: /dev/null
    std::string stderr_path;                               // empty: same file as stdout
    std::string working_dir;                               // empty: ours
};

// Options that append stdout and stderr to one file.
SpawnOptions log_to(const std::string& path);

class ChildProcess {
public:
    // Starts argv[0] (looked up in PATH when it has no '/'). Throws std::runtime_error when
    // the program cannot be started. The child gets SIGKILL if this thread of ours dies, so
    // an aborted test leaves no server behind: start children from the test's main thread.
    ChildProcess(std::vector<std::string> argv, SpawnOptions options = {});
    ~ChildProcess();  // SIGKILL and reap if still running
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    const std::vector<std::string>& argv() const { return argv_; }

    void signal(int sig);  // no-op once the child has been reaped
    // Waits up to `timeout` for the child to end; nullopt if it is still running.
    std::optional<ExitStatus> wait(std::chrono::milliseconds timeout);
    bool running();
    std::optional<ExitStatus> status() const { return status_; }
    // SIGKILL, then reap.
    ExitStatus kill();
    // `sig`, up to `grace` to end, then SIGKILL.
    ExitStatus stop(std::chrono::milliseconds grace, int sig = SIGTERM);
    // Zero until the child has been reaped (status() has a value).
    const ResourceUsage& usage() const { return usage_; }

private:
    bool reap(bool block);

    std::vector<std::string> argv_;
    pid_t pid_ = -1;
    std::optional<ExitStatus> status_;
    ResourceUsage usage_;
};

// A program run to completion with stdout and stderr captured separately.
struct RunResult {
    ExitStatus status;
    std::string out;
    std::string err;
    std::string describe() const;  // status plus both outputs, for failure messages
};
// Throws std::runtime_error if it has not ended after `timeout` (the child is killed).
RunResult run_program(std::vector<std::string> argv, std::chrono::milliseconds timeout = 30s,
                      std::vector<std::pair<std::string, std::string>> env = {});

// utime + stime of any process, from /proc/PID/stat; nullopt if it is gone.
std::optional<double> process_cpu_seconds(pid_t pid);

}  // namespace rowpump::testing
