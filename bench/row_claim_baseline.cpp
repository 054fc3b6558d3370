// The baseline the source articles start from: every worker claims its own row straight
// from MySQL, one at a time, with the "update, then select by token" pattern:
//
//   UPDATE tasks SET rp_token = ?, rp_lease_until = NOW(3) + INTERVAL 60 SECOND
//     WHERE status = 0 AND rp_token IS NULL LIMIT 1
//   SELECT user_id FROM tasks WHERE rp_token = ?
//   (no-op handler)
//   UPDATE tasks SET status = 1, rp_lease_until = NULL WHERE user_id = ? AND rp_token = ?
//
// READ COMMITTED, autocommit, one connection per thread. Runs until --rows tasks are done
// or --seconds have passed, then prints "done=N seconds=S tasks_per_s=R errors=E".

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <mysql_connection.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/testing/bench_options.hpp"
#include "rowpump/testing/mysql_client.hpp"
#include "rowpump/testing/server_env.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
    rowpump::testing::ServerEnv env;
    std::string table = "tasks";
    int threads = 50;
    std::int64_t rows = 20000;
    int seconds = 20;
};

struct Shared {
    std::atomic<std::int64_t> done{0};
    std::atomic<std::int64_t> errors{0};
    std::mutex mutex;
    std::map<int, std::int64_t> errors_by_code;  // MySQL error code -> count
    std::atomic<bool> stop{false};
    std::atomic<int> ready{0};  // threads connected and prepared
    std::atomic<bool> go{false};
    Clock::time_point deadline;  // written before go
};

void work(const Args& args, Shared& shared, int thread_index) {
    rowpump::MysqlThread mysql_thread;
    auto client = rowpump::testing::MysqlClient::connect_as_dispatcher(args.env.mysql);
    sql::Connection& conn = client.connection();
    std::unique_ptr<sql::PreparedStatement> claim(
        conn.prepareStatement("UPDATE " + args.table +
                              " SET rp_token = ?, rp_lease_until = NOW(3) + INTERVAL 60 SECOND"
                              " WHERE status = 0 AND rp_token IS NULL LIMIT 1"));
    std::unique_ptr<sql::PreparedStatement> read(
        conn.prepareStatement("SELECT user_id FROM " + args.table + " WHERE rp_token = ?"));
    std::unique_ptr<sql::PreparedStatement> finish(
        conn.prepareStatement("UPDATE " + args.table +
                              " SET status = 1, rp_lease_until = NULL"
                              " WHERE user_id = ? AND rp_token = ?"));
    const std::string prefix = "W" + std::to_string(thread_index) + "-";
    // Connecting 50 threads takes a while: the clock starts once all of them can work.
    shared.ready.fetch_add(1);
    while (!shared.go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (std::int64_t n = 0; !shared.stop.load(std::memory_order_relaxed); ++n) {
        if (Clock::now() >= shared.deadline) break;
        const std::string token = prefix + std::to_string(n);
        try {
            claim->setString(1, token);
            if (claim->executeUpdate() == 0) break;  // nothing left to claim
            read->setString(1, token);
            std::unique_ptr<sql::ResultSet> rs(read->executeQuery());
            if (!rs->next()) continue;
            finish->setInt64(1, rs->getInt64(1));
            finish->setString(2, token);
            finish->executeUpdate();
        } catch (const sql::SQLException& e) {
            // Lock wait timeouts and deadlocks are part of what this baseline shows.
            shared.errors.fetch_add(1, std::memory_order_relaxed);
            std::lock_guard<std::mutex> lock(shared.mutex);
            ++shared.errors_by_code[e.getErrorCode()];
            continue;
        }
        if (shared.done.fetch_add(1, std::memory_order_relaxed) + 1 >= args.rows) {
            shared.stop.store(true);
        }
    }
}

Args parse_args(int argc, char** argv) {
    Args args;
    args.env = rowpump::testing::server_env_from_environment();
    CLI::App app{"per-worker MySQL claims (the end-to-end benchmark's baseline)"};
    app.add_option("--table", args.table);
    rowpump::testing::add_threads_option(app, args.threads);
    rowpump::testing::add_rows_option(app, args.rows, "done");
    app.add_option("--seconds", args.seconds, "stop after this long");
    rowpump::testing::parse_or_exit(app, argc, argv);
    return args;
}

}  // namespace

int main(int argc, char** argv) try {
    const Args args = parse_args(argc, argv);
    Shared shared;
    std::atomic<int> failed{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < args.threads; ++i) {
        threads.emplace_back([&, i] {
            try {
                work(args, shared, i);
            } catch (const std::exception& e) {
                std::cerr << "row_claim_baseline: thread " << i << ": " << e.what() << "\n";
                failed.fetch_add(1);
                shared.ready.fetch_add(1);  // do not hold up the others
            }
        });
    }
    while (shared.ready.load() < args.threads) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const auto start = Clock::now();
    shared.deadline = start + std::chrono::seconds(args.seconds);
    shared.go.store(true);
    for (auto& t : threads) t.join();
    if (failed.load() > 0) return 1;
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    for (const auto& [code, count] : shared.errors_by_code) {
        std::printf("MySQL error %d: %lld times\n", code, static_cast<long long>(count));
    }
    const auto done = shared.done.load();
    std::printf("done=%lld seconds=%.3f tasks_per_s=%.1f errors=%lld\n",
                static_cast<long long>(done), seconds, static_cast<double>(done) / seconds,
                static_cast<long long>(shared.errors.load()));
    return 0;
} catch (const std::exception& e) {
    std::cerr << "row_claim_baseline: " << e.what() << "\n";
    return 1;
}
