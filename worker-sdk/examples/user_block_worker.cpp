// A worker for the "user_block_check" queue: re-checks whether a user is blocked, from the
// user's page that comes with the task, and reports the status the dispatcher writes back with
// `status = :status`.
//
//   rowpump_example_user_block_worker --redis-port 6379 --threads 8
//   ROWPUMP_REDIS_PASSWORD=... rowpump_example_user_block_worker --redis-host redis
//   rowpump_example_user_block_worker --redis-user rowpump-worker \
//       --redis-password-file /etc/rowpump/redis-worker-password
//
// The password never comes from the command line, where `ps` shows it to every user.
//
// SIGINT or SIGTERM: stop taking tasks, finish the ones in hand, exit.

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "rowpump/worker.hpp"

namespace {

// Stands in for the real check (fetching the user's page, a rule engine, ...): 2 blocked,
// 1 fine. The page comes with the task (deploy/demo.yaml: `payload: [page]`), so the worker
// needs no MySQL; this stand-in reads the number its path ends in. A queue that sends no page
// gets the answer from the id.
int check_user(long long user_id, const std::optional<std::string>& page) {
    if (page) {
        const auto slash = page->rfind('/');
        if (slash != std::string::npos) user_id = std::atoll(page->c_str() + slash + 1);
    }
    return user_id % 7 == 0 ? 2 : 1;
}

struct Args {
    rowpump::WorkerOptions options;
    std::string password_file;
    int work_ms = 0;
};

// The file's content up to its first line end, so `echo secret >file` works.
std::string read_password_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read --redis-password-file " + path);
    std::string password;
    std::getline(in, password);
    if (!password.empty() && password.back() == '\r') password.pop_back();
    if (password.empty()) throw std::runtime_error("--redis-password-file " + path + " is empty");
    return password;
}

// ROWPUMP_REDIS_PASSWORD or --redis-password-file, not both: two sources that may disagree
// are a mistake worth stopping for.
std::string redis_password(const std::string& password_file) {
    const char* from_environment = std::getenv("ROWPUMP_REDIS_PASSWORD");
    if (password_file.empty()) return from_environment ? from_environment : "";
    if (from_environment) {
        throw std::runtime_error(
            "the Redis password is given twice: ROWPUMP_REDIS_PASSWORD and "
            "--redis-password-file; keep one");
    }
    return read_password_file(password_file);
}

constexpr int kUsageError = 2;

}  // namespace

int main(int argc, char** argv) try {
    Args args;
    args.options.queue = "user_block_check";
    CLI::App app{
        "rowpump example worker: re-checks users of the user_block_check queue.\n"
        "The Redis password, if any, comes from ROWPUMP_REDIS_PASSWORD or "
        "--redis-password-file."};
    app.add_option("--redis-host", args.options.redis.host, "Redis host (default 127.0.0.1)");
    app.add_option("--redis-port", args.options.redis.port, "Redis port (default 6379)")
        ->check(CLI::Range(1, 65535));
    app.add_option("--redis-user", args.options.redis.user,
                   "Redis ACL user (default: the default user)");
    app.add_option("--redis-password-file", args.password_file,
                   "file whose first line is the Redis password");
    app.add_option("--queue", args.options.queue, "queue name (default user_block_check)");
    app.add_option("--threads", args.options.threads, "concurrent handlers (default 1)")
        ->check(CLI::PositiveNumber);
    app.add_option("--work-ms", args.work_ms, "pretend each check takes this long")
        ->check(CLI::NonNegativeNumber);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : kUsageError;
    }
    try {
        args.options.redis.password = redis_password(args.password_file);
    } catch (const std::runtime_error& e) {  // a bad option value, like those CLI11 finds
        std::cerr << "user_block_worker: " << e.what() << "\n";
        return kUsageError;
    }
    // Block the stop signals before any thread starts; this thread alone waits for them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    rowpump::Worker worker(args.options);
    int exit_code = 0;
    std::thread runner([&] {
        try {
            worker.run([&](const rowpump::Task& task) {
                if (args.work_ms > 0)
                    std::this_thread::sleep_for(std::chrono::milliseconds(args.work_ms));
                char* end = nullptr;
                long long user_id = std::strtoll(task.id.c_str(), &end, 10);
                if (*end != '\0')
                    return rowpump::Outcome::fail("user id is not a number");  // never will be
                // An exception thrown here (a timeout, say) would make the task a retry.
                const auto page = task.fields.find("page");
                const int status =
                    check_user(user_id, page == task.fields.end() ? std::nullopt : page->second);
                return rowpump::Outcome::success({{"status", std::to_string(status)}});
            });
        } catch (const std::exception& e) {  // bad options or an unknown queue
            std::cerr << "user_block_worker: " << e.what() << "\n";
            exit_code = 1;
        }
        kill(getpid(), SIGTERM);  // run() may return on its own: wake the main thread
    });

    int signal = 0;
    sigwait(&signals, &signal);
    worker.stop();
    runner.join();
    return exit_code;
} catch (const std::exception& e) {
    std::cerr << "user_block_worker: " << e.what() << "\n";
    return 1;
}
