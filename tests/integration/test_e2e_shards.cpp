// End to end, one queue over three MariaDB shards and two dispatcher processes on one config,
// which share the shards: every row of every shard completes exactly once (its `runs` column
// counts applied outcomes) while the dispatcher leading some shards is killed with SIGKILL (the
// other takes them over)
// and one MariaDB is stopped (the other shards keep completing; its rows resume when it is
// back). The rows carry the same ids on every shard, so an outcome applied to the wrong
// shard would show as a run too many there and a row left on its own.

#include <signal.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/rowpump_cli.hpp"

using namespace rowpump::testing;
using std::chrono::milliseconds;

namespace {

constexpr std::int64_t kRowsPerShard = 4000;
constexpr std::size_t kShards = 3;
constexpr std::int64_t kProgress = 300;  // rows a shard must complete to count as flowing

struct Shard {
    std::string name;
    MariaDb server;
    std::string database = server.create_database();

    MysqlClient db() const { return server.connect(database); }
    std::int64_t completed() const {
        return db().scalar("SELECT COUNT(*) FROM user_block_status WHERE status <> 0");
    }
    // Rows not completed, and rows whose on_success did not run exactly once.
    std::int64_t wrong() const {
        return db().scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 0 OR runs <> 1");
    }
};

// A small ready list (max_backlog) keeps every shard dispatching throughout; a short
// leader_timeout makes the takeover quick.
QueueSpec sharded_queue(const std::array<std::unique_ptr<Shard>, kShards>& shards) {
    QueueSpec queue = e2e_queue();
    queue.batch = 100;
    queue.max_backlog = 300;
    queue.lease = "30s";
    queue.extra_lines.push_back("leader_timeout: 1s");
    queue.extra_lines.push_back("shards:");
    for (const auto& shard : shards) {
        queue.extra_lines.push_back("  - name: " + shard->name);
        queue.extra_lines.push_back("    mysql: { port: " + std::to_string(shard->server.port()) +
                                    ", database: " + shard->database + " }");
    }
    return queue;
}

// The pid in a leader lock's value "<host>:<pid>:<random>", or 0 when nobody leads.
pid_t leader_pid(rowpump::redis::Connection& redis, const std::string& key) {
    const auto holder = redis.command({"GET", key}).optional_string();
    if (!holder) return 0;
    std::istringstream fields(*holder);
    std::string host, pid;
    std::getline(fields, host, ':');
    std::getline(fields, pid, ':');
    return static_cast<pid_t>(std::stol(pid));
}

}  // namespace

TEST_CASE(
    "e2e: one queue over three MariaDB shards and two dispatchers: every row once, through a "
    "dispatcher killed and a shard stopped",
    "[e2e][shards]") {
    TempDir dir("rowpump-shards-");
    RedisServer redis_server;
    std::array<std::unique_ptr<Shard>, kShards> shards;
    for (std::size_t i = 0; i < kShards; ++i) {
        shards[i] = std::make_unique<Shard>();
        shards[i]->name = "s" + std::to_string(i);
        auto db = shards[i]->db();
        create_e2e_table(db);
        insert_e2e_rows(db, 1, kRowsPerShard);
    }
    const auto config = write_config(
        dir.file("rowpump.yaml"),
        config_for(shards[0]->server, redis_server, shards[0]->database, {sharded_queue(shards)}));
    migrate_apply(config);  // every shard's table
    auto redis = redis_server.connect();
    const auto keys = rowpump::protocol::keys_for("users");

    // The second dispatcher starts once the first leads every shard: it gets some handed over.
    std::array<std::unique_ptr<Dispatcher>, 2> dispatchers;
    dispatchers[0] = std::make_unique<Dispatcher>(config, dir.file("dispatcher-a.log"));
    auto leads_all = [&](pid_t pid) {
        for (const auto& shard : shards) {
            if (leader_pid(redis, keys.shard_leader(shard->name)) != pid) return false;
        }
        return true;
    };
    REQUIRE(eventually(20s, [&] { return leads_all(dispatchers[0]->process().pid()); }));
    dispatchers[1] = std::make_unique<Dispatcher>(config, dir.file("dispatcher-b.log"));
    std::vector<std::unique_ptr<TestWorkerProcess>> workers;
    for (const char* id : {"w1", "w2"}) {
        TestWorkerSpec spec;
        spec.worker_id = id;
        spec.threads = 3;
        spec.work = milliseconds(20);
        workers.push_back(std::make_unique<TestWorkerProcess>(ROWPUMP_TEST_WORKER,
                                                              redis_server.port(), dir, spec));
    }
    auto summary = [&] {
        std::string out = describe_stats(redis, "users");
        for (const auto& shard : shards) {
            out += "; " + shard->name + " leader pid " +
                   std::to_string(leader_pid(redis, keys.shard_leader(shard->name)));
        }
        return out;
    };
    // Every shard in `which` completes kProgress more rows than it had.
    auto require_flow = [&](const std::vector<std::size_t>& which) {
        std::vector<std::int64_t> before;
        for (auto i : which) before.push_back(shards[i]->completed());
        const bool flowing = eventually(60s, [&] {
            for (std::size_t k = 0; k < which.size(); ++k) {
                if (shards[which[k]]->completed() < before[k] + kProgress) return false;
            }
            return true;
        });
        INFO(summary());
        REQUIRE(flowing);
    };

    require_flow({0, 1, 2});  // all shards feed the one ready list

    // The dispatchers share the shards: the first hands one over to the second.
    const bool shared = eventually(20s, [&] {
        std::array<int, 2> led{0, 0};
        for (const auto& shard : shards) {
            const pid_t pid = leader_pid(redis, keys.shard_leader(shard->name));
            for (std::size_t d = 0; d < 2; ++d) led[d] += dispatchers[d]->process().pid() == pid;
        }
        return led[0] >= 1 && led[1] >= 1 && led[0] + led[1] == 3;
    });
    {
        INFO(summary());
        REQUIRE(shared);
    }

    // SIGKILL the dispatcher that leads shard s0 (and whatever else it leads): the other
    // takes its shards over, and they keep completing.
    // s0's lock may be free for a moment (leader_timeout is 1 s, and a loaded machine can
    // delay a renewal past it): the victim is whoever holds it next.
    pid_t victim_pid = 0;
    const bool s0_led = eventually(20s, [&] {
        victim_pid = leader_pid(redis, keys.shard_leader("s0"));
        return victim_pid == dispatchers[0]->process().pid() ||
               victim_pid == dispatchers[1]->process().pid();
    });
    {
        INFO(summary());
        REQUIRE(s0_led);
    }
    const std::size_t victim = dispatchers[0]->process().pid() == victim_pid ? 0 : 1;
    dispatchers[victim]->process().kill();
    const pid_t survivor_pid = dispatchers[1 - victim]->process().pid();
    const bool taken_over = eventually(20s, [&] { return leads_all(survivor_pid); });
    {
        INFO(summary());
        REQUIRE(taken_over);
    }
    require_flow({0, 1, 2});

    // Stop the MariaDB of s2: s0 and s1 keep completing while it is down.
    shards[2]->server.stop();
    require_flow({0, 1});
    shards[2]->server.start();

    // Everything completes, exactly once, on each shard.
    const bool done = eventually(
        120s,
        [&] {
            for (const auto& shard : shards) {
                if (shard->wrong() != 0) return false;
            }
            return true;
        },
        200ms);
    INFO(summary());
    for (const auto& shard : shards) {
        INFO("shard " << shard->name);
        CHECK(shard->wrong() == 0);
        CHECK(shard->completed() == kRowsPerShard);
    }
    REQUIRE(done);
    REQUIRE(eventually(10s, [&] {
        return list_length(redis, keys.done) == 0 &&
               list_length(redis, keys.shard_done("s0")) == 0 &&
               list_length(redis, keys.shard_done("s1")) == 0 &&
               list_length(redis, keys.shard_done("s2")) == 0;
    }));
    CHECK(list_length(redis, keys.bad) == 0);
}
