#include "rowpump/testing/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "rowpump/testing/temp_dir.hpp"

extern char** environ;

namespace rowpump::testing {

bool ExitStatus::exited() const {
    return WIFEXITED(raw);
}
int ExitStatus::code() const {
    return WEXITSTATUS(raw);
}
bool ExitStatus::signaled() const {
    return WIFSIGNALED(raw);
}
int ExitStatus::signal() const {
    return WTERMSIG(raw);
}

std::string ExitStatus::describe() const {
    const std::string after = forced ? " after SIGKILL" : "";
    if (exited()) return "exit code " + std::to_string(code()) + after;
    if (signaled()) {
        return "killed by signal " + std::to_string(signal()) + " (" + strsignal(signal()) + ")" +
               after;
    }
    return "wait status " + std::to_string(raw) + after;
}

namespace {

double seconds_of(const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

std::vector<std::string> merged_environment(
    const std::vector<std::pair<std::string, std::string>>& extra) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string entry = *e;
        bool replaced = false;
        for (const auto& [name, value] : extra) {
            replaced = replaced || entry.compare(0, name.size() + 1, name + "=") == 0;
        }
        if (!replaced) env.push_back(std::move(entry));
    }
    for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// PATH lookup happens here, before fork, because the child may only make async-signal-safe calls.
std::string resolve_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
    std::size_t begin = 0;
    while (begin <= dirs.size()) {
        std::size_t end = dirs.find(':', begin);
        if (end == std::string::npos) end = dirs.size();
        std::string candidate = dirs.substr(begin, end - begin) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        begin = end + 1;
    }
    throw std::runtime_error("program not found in PATH: " + name);
}

int open_output(const std::string& path) {
    int fd = ::open(path.empty() ? "/dev/null" : path.c_str(),
                    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
    return fd;
}

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(pid_t parent, int out_fd, int err_fd, const char* dir, char** argv,
                             char** envp) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);  // the parent died before prctl took effect
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD}) ::signal(sig, SIG_DFL);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) {
        ::_exit(126);
    }
    if (dir != nullptr && ::chdir(dir) != 0) ::_exit(126);
    ::execve(argv[0], argv, envp);
    static const char msg[] = "exec failed\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
    ::_exit(127);
}

}  // namespace

SpawnOptions log_to(const std::string& path) {
    SpawnOptions options;
    options.stdout_path = path;
    return options;
}

ChildProcess::ChildProcess(std::vector<std::string> argv, SpawnOptions options)
    : argv_(std::move(argv)) {
    if (argv_.empty()) throw std::invalid_argument("ChildProcess: empty argv");
    std::vector<std::string> args = argv_;
    args[0] = resolve_program(args[0]);
    std::vector<std::string> env = merged_environment(options.env);
    std::vector<char*> c_argv = c_strings(args);
    std::vector<char*> c_env = c_strings(env);
    int out_fd = open_output(options.stdout_path);
    int err_fd = options.stderr_path.empty() ? out_fd : open_output(options.stderr_path);
    const char* dir = options.working_dir.empty() ? nullptr : options.working_dir.c_str();
    pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) exec_child(parent, out_fd, err_fd, dir, c_argv.data(), c_env.data());
    int fork_errno = errno;
    ::close(out_fd);
    if (err_fd != out_fd) ::close(err_fd);
    if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
}

ChildProcess::~ChildProcess() {
    if (!status_ && pid_ > 0) kill();
}

bool ChildProcess::reap(bool block) {
    if (status_) return true;
    int raw = 0;
    rusage used{};
    pid_t r;
    do {
        r = ::wait4(pid_, &raw, block ? 0 : WNOHANG, &used);
    } while (r < 0 && errno == EINTR);
    if (r == pid_) {
        status_ = ExitStatus{raw};
        usage_ =
            ResourceUsage{seconds_of(used.ru_utime), seconds_of(used.ru_stime), used.ru_maxrss};
        return true;
    }
    if (r < 0)
        throw std::runtime_error("waitpid " + std::to_string(pid_) + ": " + std::strerror(errno));
    return false;
}

void ChildProcess::signal(int sig) {
    if (!status_) ::kill(pid_, sig);
}

std::optional<ExitStatus> ChildProcess::wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!reap(false)) {
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(2ms);
    }
    return status_;
}

bool ChildProcess::running() {
    return !reap(false);
}

ExitStatus ChildProcess::kill() {
    signal(SIGKILL);
    reap(true);
    return *status_;
}

ExitStatus ChildProcess::stop(std::chrono::milliseconds grace, int sig) {
    signal(sig);
    if (wait(grace)) return *status_;
    kill();
    status_->forced = true;
    return *status_;
}

std::optional<double> process_cpu_seconds(pid_t pid) {
    if (pid <= 0) return std::nullopt;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    // After "pid (comm)": field 3 is the state; utime and stime are fields 14 and 15.
    std::istringstream fields(text.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int index = 3; index <= 15 && fields >> field; ++index) {
        if (index >= 14) ticks += std::stod(field);
    }
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::string RunResult::describe() const {
    return status.describe() + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
}

RunResult run_program(std::vector<std::string> argv, std::chrono::milliseconds timeout,
                      std::vector<std::pair<std::string, std::string>> env) {
    TempDir dir("rowpump-run-", TempDir::Keep::never);
    SpawnOptions options;
    options.env = std::move(env);
    options.stdout_path = dir.file("stdout");
    options.stderr_path = dir.file("stderr");
    ChildProcess child(argv, options);
    std::optional<ExitStatus> status = child.wait(timeout);
    if (!status) {
        child.kill();
        throw std::runtime_error("'" + argv[0] + "' still running after " +
                                 std::to_string(timeout.count()) + " ms; stderr:\n" +
                                 file_tail(dir.file("stderr")));
    }
    return RunResult{*status, read_file(dir.file("stdout")), read_file(dir.file("stderr"))};
}

}  // namespace rowpump::testing
