#include "support/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace rowpump::bench {

namespace {

double seconds_of(const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

}  // namespace

bool Usage::clean_exit() const {
    return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

std::string Usage::describe() const {
    std::string text = WIFEXITED(wait_status) ? "exit " + std::to_string(WEXITSTATUS(wait_status))
                       : WIFSIGNALED(wait_status)
                           ? "signal " + std::to_string(WTERMSIG(wait_status))
                           : "status " + std::to_string(wait_status);
    return killed ? text + " after SIGKILL" : text;
}

Child::Child(std::vector<std::string> argv, const std::string& log_path) : argv_(std::move(argv)) {
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("open " + log_path + ": " + std::strerror(errno));
    std::vector<char*> args;
    for (auto& a : argv_) args.push_back(a.data());
    args.push_back(nullptr);
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
        // Only async-signal-safe calls from here on.
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // a crashed driver leaves no child behind
        if (getppid() != parent) _exit(127);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        execv(args[0], args.data());
        _exit(127);
    }
    const int fork_errno = errno;
    ::close(fd);
    if (pid_ < 0) throw std::runtime_error("fork: " + std::string(std::strerror(fork_errno)));
}

Child::~Child() {
    if (pid_ > 0 && !usage_) {
        ::kill(pid_, SIGKILL);
        reap(true);
    }
}

bool Child::reap(bool block) {
    if (usage_) return true;
    int status = 0;
    rusage ru{};
    const pid_t r = wait4(pid_, &status, block ? 0 : WNOHANG, &ru);
    if (r != pid_) return false;
    Usage u;
    u.user_seconds = seconds_of(ru.ru_utime);
    u.system_seconds = seconds_of(ru.ru_stime);
    u.max_rss_kb = ru.ru_maxrss;
    u.wait_status = status;
    usage_ = u;
    return true;
}

bool Child::running() {
    return !reap(false);
}

Usage Child::wait(std::chrono::milliseconds limit, std::chrono::milliseconds grace) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (running() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return stop(grace);
}

Usage Child::stop(std::chrono::milliseconds grace) {
    if (running()) {
        ::kill(pid_, SIGTERM);
        const auto deadline = std::chrono::steady_clock::now() + grace;
        while (running() && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (running()) {
            ::kill(pid_, SIGKILL);
            reap(true);
            usage_->killed = true;
        }
    }
    return *usage_;
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

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace rowpump::bench
