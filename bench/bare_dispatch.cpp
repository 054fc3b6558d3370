// The baseline of the dispatch benchmark: the dispatcher's claim SQL and push and nothing
// else. No config file, no rate limiter, no outcome handling, no reaping, no stats: claim
// (SELECT the lease end; UPDATE ... SET token, lease ... ORDER BY updated_time LIMIT n), read
// back by lease end and token, one pipelined RPUSH, repeat. Written straight against
// mysqlcppconn and hiredis.
//
// The sweep statements are the ones `rowpump check` prints for the benchmark's queue,
// including the cursor: each claim starts at the updated_time of the last row of the previous
// one, and the sweep starts over when it runs out of due rows. The dispatcher also runs a
// second claim each cycle (expired leases and due retries, through rp_lease_idx); this loop
// does not: that statement is part of what the dispatcher costs. `--sweep-restart-ms` copies
// the once-a-second restart of dispatchers before 35a2ebd (a diagnostic).
//
// Stops by itself after pushing --rows rows, when nothing is due any more, or at
// --time-limit. Prints one line: "pushed=N seconds=S rows_per_s=R claims=C".

#include <hiredis/hiredis.h>

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <mysql_connection.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/mysql.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using rowpump::bench::ServerEnv;

constexpr std::size_t kPushChunk = 1000;  // values per RPUSH, as the dispatcher does

const char* const kStamp =
    "UPDATE `user_block_status`\n"
    "SET `rp_token` = CONCAT(?, `rp_attempts` + 1, '-', HEX(`user_id`)),\n"
    "    `rp_lease_until` = ?\n"
    "WHERE (updated_time < NOW(3) - INTERVAL 10 SECOND)\n"
    "  AND `rp_dead_at` IS NULL AND (`rp_lease_until` IS NULL OR `rp_lease_until` <= NOW(3))";
const char* const kCursor = "\n  AND `updated_time` >= ?";
const char* const kOrder = "\nORDER BY `updated_time`\nLIMIT ?";
const char* const kLeaseUntil = "SELECT CAST(NOW(3) + INTERVAL ? MICROSECOND AS DATETIME(3))";
const char* const kReadBack =
    "SELECT `user_id`, `rp_token`, `updated_time` FROM `user_block_status` WHERE `rp_lease_until` = "
    "? AND `rp_token` >= ? AND `rp_token` < ?\nORDER BY `updated_time`";

struct Args {
    ServerEnv env;
    std::string queue = "user_block_check";
    std::int64_t batch = 1000;
    std::int64_t rows = 1000000;
    std::int64_t lease_ms = 3600000;
    int sweep_restart_ms = 0;
    int time_limit_s = 300;
};

struct RedisFree {
    void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
    void operator()(void* r) const { freeReplyObject(r); }
};
using RedisPtr = std::unique_ptr<redisContext, RedisFree>;

RedisPtr connect_redis(const ServerEnv& env) {
    RedisPtr c(redisConnect(env.redis_host.c_str(), env.redis_port));
    if (!c || c->err) throw std::runtime_error("redis connect failed");
    return c;
}

// One pipelined RPUSH of every message, in chunks of kPushChunk values.
void push(redisContext* c, const std::string& key, const std::vector<std::string>& messages) {
    std::size_t replies = 0;
    for (std::size_t start = 0; start < messages.size(); start += kPushChunk) {
        const std::size_t end = std::min(messages.size(), start + kPushChunk);
        std::vector<const char*> argv{"RPUSH", key.c_str()};
        std::vector<std::size_t> lengths{5, key.size()};
        for (std::size_t i = start; i < end; ++i) {
            argv.push_back(messages[i].data());
            lengths.push_back(messages[i].size());
        }
        redisAppendCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lengths.data());
        ++replies;
    }
    for (std::size_t i = 0; i < replies; ++i) {
        void* raw = nullptr;
        if (redisGetReply(c, &raw) != REDIS_OK) throw std::runtime_error("redis: RPUSH failed");
        std::unique_ptr<void, ReplyFree> reply(raw);
        if (static_cast<redisReply*>(raw)->type == REDIS_REPLY_ERROR) {
            throw std::runtime_error(std::string("redis: ") + static_cast<redisReply*>(raw)->str);
        }
    }
}

class BareLoop {
public:
    BareLoop(const Args& args, sql::Connection& conn)
        : args_(args),
          lease_until_(conn.prepareStatement(kLeaseUntil)),
          claim_(conn.prepareStatement(std::string(kStamp) + kOrder)),
          claim_from_(conn.prepareStatement(std::string(kStamp) + kCursor + kOrder)),
          read_back_(conn.prepareStatement(kReadBack)),
          random_(std::random_device{}()) {}

    // Claims up to `limit` rows and returns their "<id>:<token>" messages.
    std::vector<std::string> claim(std::int64_t limit);

private:
    const Args& args_;
    std::unique_ptr<sql::PreparedStatement> lease_until_, claim_, claim_from_, read_back_;
    std::mt19937_64 random_;
    std::optional<std::string> cursor_;
    Clock::time_point sweep_started_;
};

std::vector<std::string> BareLoop::claim(std::int64_t limit) {
    const auto now = Clock::now();
    if (cursor_ && args_.sweep_restart_ms > 0 &&
        now - sweep_started_ >= std::chrono::milliseconds(args_.sweep_restart_ms)) {
        cursor_.reset();
    }
    char prefix[24];
    std::snprintf(prefix, sizeof prefix, "%016llX-", static_cast<unsigned long long>(random_()));
    lease_until_->setString(1, std::to_string(args_.lease_ms * 1000));
    std::unique_ptr<sql::ResultSet> lease(lease_until_->executeQuery());
    if (!lease->next()) throw std::runtime_error("no lease end");
    const std::string lease_until = lease->getString(1);

    sql::PreparedStatement& stmt = cursor_ ? *claim_from_ : *claim_;
    unsigned index = 1;
    stmt.setString(index++, prefix);
    stmt.setString(index++, lease_until);
    if (cursor_) stmt.setString(index++, *cursor_);
    stmt.setInt64(index, limit);
    const auto claimed = stmt.executeUpdate();
    if (claimed < limit) cursor_.reset();
    std::vector<std::string> messages;
    if (claimed == 0) return messages;

    std::string upper = prefix;
    upper.back() = '.';
    read_back_->setString(1, lease_until);
    read_back_->setString(2, prefix);
    read_back_->setString(3, upper);
    std::unique_ptr<sql::ResultSet> rs(read_back_->executeQuery());
    messages.reserve(rs->rowsCount());
    std::string last;
    while (rs->next()) {
        messages.push_back(std::string(rs->getString(1)) + ":" + std::string(rs->getString(2)));
        last = rs->getString(3);
    }
    if (claimed == limit) {
        if (!cursor_) sweep_started_ = now;
        cursor_ = last;
    }
    return messages;
}

Args parse_args(int argc, char** argv) {
    Args args;
    args.env = rowpump::bench::server_env_from_environment();
    CLI::App app{"bare claim + push loop (the dispatch benchmark's baseline)"};
    app.add_option("--queue", args.queue, "queue name (ready list rowpump:{QUEUE}:ready)");
    app.add_option("--batch", args.batch, "rows per claim")->check(CLI::PositiveNumber);
    app.add_option("--rows", args.rows, "stop after pushing this many rows");
    app.add_option("--lease-ms", args.lease_ms, "lease stamped on claimed rows");
    app.add_option("--sweep-restart-ms", args.sweep_restart_ms,
                   "restart the sweep this often, like the dispatcher (0: only at the end)");
    app.add_option("--time-limit", args.time_limit_s, "seconds");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::exit(app.exit(e));
    }
    return args;
}

}  // namespace

int main(int argc, char** argv) try {
    const Args args = parse_args(argc, argv);
    auto conn = rowpump::bench::connect_mysql(args.env);
    auto redis = connect_redis(args.env);
    const std::string key = "rowpump:{" + args.queue + "}:ready";
    BareLoop loop(args, *conn);

    const auto start = Clock::now();
    const auto deadline = start + std::chrono::seconds(args.time_limit_s);
    std::int64_t pushed = 0, claims = 0;
    while (pushed < args.rows && Clock::now() < deadline) {
        const auto messages = loop.claim(args.batch);
        ++claims;
        if (messages.empty()) break;  // nothing due any more
        push(redis.get(), key, messages);
        pushed += static_cast<std::int64_t>(messages.size());
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("pushed=%lld seconds=%.3f rows_per_s=%.0f claims=%lld\n",
                static_cast<long long>(pushed), seconds, static_cast<double>(pushed) / seconds,
                static_cast<long long>(claims));
    return 0;
} catch (const std::exception& e) {
    std::cerr << "bare_dispatch: " << e.what() << "\n";
    return 1;
}
