#pragma once

// Child processes for integration tests: servers and the rowpump executable.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rowpump::test {

using namespace std::chrono_literals;

// How a child ended, from waitpid.
struct ExitStatus {
    int raw = 0;

    bool exited() const;
    int code() const;  // precondition: exited()
    bool signaled() const;
    int signal() const;  // precondition: signaled()
    bool success() const { return exited() && code() == 0; }
    std::string describe() const;  // "exit code 0", "killed by signal 9 (Killed)"
};

struct SpawnOptions {
    std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) ours
    std::string stdout_path;                               // empty: /dev/null
    std::string stderr_path;                               // empty: same file as stdout
    std::string working_dir;                               // empty: ours
};

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

  private:
    bool reap(bool block);

    std::vector<std::string> argv_;
    pid_t pid_ = -1;
    std::optional<ExitStatus> status_;
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

}  // namespace rowpump::test
