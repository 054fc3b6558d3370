// The baseline of the dispatch benchmark: the dispatcher's claim SQL and push and nothing
// else. No rate limiter, no outcome handling, no reaping, no stats: claim (SELECT the lease
// end; UPDATE ... SET token, lease ... ORDER BY ... LIMIT n), read back by lease end and
// token, one pipelined RPUSH, repeat. Written straight against mysqlcppconn and hiredis.
//
// The queue comes from a rowpump config (-c) and the claim statements from the dispatcher's
// own QueueSql, so they are the ones `rowpump check` prints, including the cursor: each
// claim starts at the first order_by value of the last row of the previous one, and the sweep
// starts over when it runs out of due rows. The dispatcher also runs a second claim each
// cycle (expired leases and due retries, through rp_lease_idx, after a plain read that looks
// for them); this loop does not: those statements are part of what the dispatcher costs.
// `--sweep-restart-ms` copies the once-a-second restart of dispatchers before 35a2ebd (a
// diagnostic).
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
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"
#include "rowpump/testing/bench_options.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kPushChunk = 1000;  // values per RPUSH, as the dispatcher does

// The first column of QueueSql::claim_plan() without its look for expired rows, which this
// loop never claims.
const char* const kLeaseUntil = "SELECT CAST(NOW(3) + INTERVAL ? MICROSECOND AS DATETIME(3))";

struct Args {
    std::string config;
    std::string queue;  // empty: the config's first
    std::int64_t rows = 1000000;
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

RedisPtr connect_redis(const rowpump::RedisAddress& redis) {
    RedisPtr c(redisConnect(redis.host.c_str(), redis.port));
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
    BareLoop(const Args& args, const rowpump::QueueConfig& queue, sql::Connection& conn)
        : args_(args),
          sql_(queue),
          lease_us_(std::to_string(queue.lease.count() * 1000)),
          lease_until_(conn.prepareStatement(kLeaseUntil)),
          claim_(conn.prepareStatement(sql_.claim())),
          read_back_(conn.prepareStatement(sql_.read_back())),
          random_(std::random_device{}()) {
        // Without order_by there is no cursor: every claim starts from the top.
        if (!sql_.claim_from().empty()) claim_from_.reset(conn.prepareStatement(sql_.claim_from()));
    }

    // Claims up to `limit` rows and returns their "<id>:<token>" messages.
    std::vector<std::string> claim(std::int64_t limit);

private:
    const Args& args_;
    const rowpump::QueueSql sql_;
    const std::string lease_us_;
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
    lease_until_->setString(1, lease_us_);
    std::unique_ptr<sql::ResultSet> lease(lease_until_->executeQuery());
    if (!lease->next()) throw std::runtime_error("no lease end");
    const std::string lease_until = lease->getString(1);

    sql::PreparedStatement& stmt = cursor_ ? *claim_from_ : *claim_;
    unsigned index = 1;
    if (cursor_) stmt.setString(index++, *cursor_);
    stmt.setInt64(index++, limit);
    stmt.setString(index++, prefix);
    stmt.setString(index, lease_until);
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
        messages.push_back(rowpump::protocol::format_ready(std::string(rs->getString(1)),
                                                           std::string(rs->getString(2))));
        if (claim_from_) last = rs->getString(3);
    }
    if (claimed == limit && claim_from_) {
        if (!cursor_) sweep_started_ = now;
        cursor_ = last;
    }
    return messages;
}

Args parse_args(int argc, char** argv) {
    Args args;
    CLI::App app{"bare claim + push loop (the dispatch benchmark's baseline)"};
    app.add_option("-c,--config", args.config, "rowpump config with the queue")->required();
    app.add_option("--queue", args.queue, "queue in the config (default: the first)");
    rowpump::testing::add_rows_option(app, args.rows, "pushed");
    app.add_option("--sweep-restart-ms", args.sweep_restart_ms,
                   "restart the sweep this often, like the dispatcher (0: only at the end)");
    rowpump::testing::add_time_limit_option(app, args.time_limit_s);
    rowpump::testing::parse_or_exit(app, argc, argv);
    return args;
}

const rowpump::QueueConfig& find_queue(const rowpump::Config& config, const std::string& name) {
    if (name.empty()) return config.queues.front();
    const auto* queue = config.find_queue(name);
    if (queue == nullptr) throw std::runtime_error("no queue " + name + " in " + config.file);
    return *queue;
}

}  // namespace

int main(int argc, char** argv) try {
    const Args args = parse_args(argc, argv);
    const rowpump::Config config = rowpump::load_config(args.config);
    const rowpump::QueueConfig& queue = find_queue(config, args.queue);
    auto conn = rowpump::connect_mysql(config.mysql);
    auto redis = connect_redis(config.redis);
    const std::string key = rowpump::protocol::keys_for(queue.name).ready;
    BareLoop loop(args, queue, *conn);

    const auto start = Clock::now();
    const auto deadline = start + std::chrono::seconds(args.time_limit_s);
    std::int64_t pushed = 0, claims = 0;
    while (pushed < args.rows && Clock::now() < deadline) {
        const auto messages = loop.claim(queue.batch);
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
