#pragma once

// The rowpump executable under test (ROWPUMP_EXE): one-shot commands and the dispatcher
// (`rowpump run`) as a child process.

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rowpump/testing/process.hpp"

namespace rowpump::testing {

// The path of the rowpump executable under test.
std::string rowpump_exe();

// `rowpump <args...>` run to completion.
RunResult rowpump_cli(std::vector<std::string> args, std::chrono::milliseconds timeout = 30s);

// `rowpump migrate -c CONFIG --apply`; throws std::runtime_error with the output on failure.
void migrate_apply(const std::string& config);

// `rowpump run -c CONFIG --log-level debug`, output to `log_path`. Killed when destroyed;
// if the test case failed, the tail of its log goes to stderr first.
class Dispatcher {
public:
    // `env`: more environment variables (stepped_clock_env()).
    Dispatcher(const std::string& config, std::string log_path,
               std::vector<std::pair<std::string, std::string>> env = {});
    ~Dispatcher();
    Dispatcher(const Dispatcher&) = delete;
    Dispatcher& operator=(const Dispatcher&) = delete;

    ChildProcess& process() { return process_; }
    bool running() { return process_.running(); }
    void signal(int sig) { process_.signal(sig); }
    std::optional<ExitStatus> wait(std::chrono::milliseconds timeout) {
        return process_.wait(timeout);
    }

    const std::string& log_path() const { return log_path_; }
    std::string log() const;
    std::string log_tail(std::size_t lines = 40) const;
    // How often `text` occurs in the log so far.
    std::size_t log_count(const std::string& text) const;

private:
    std::string log_path_;
    ChildProcess process_;
};

}  // namespace rowpump::testing
