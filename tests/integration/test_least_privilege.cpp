// Least privilege, as docs/operations.md's "Least privilege" section states it: `migrate` runs as
// the admin user; `check`, `run`, `status`, `dead` and `retry` as a MySQL user holding only the the
// documented GRANT on the task table and the the documented Redis ACL line for the dispatcher; the
// workers (the SDK in this process, the example worker with its password in a file) with the
// worker line (a queue's own). The GRANTs and ACL lines are read from docs/operations.md, so the
// two cannot drift. The worker line is also walked through the worker's side of the protocol as it
// stands and with each of its words taken out.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rowpump/common/protocol/queue_gauges.hpp"
#include "rowpump/common/protocol/scripts.hpp"
#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/e2e_worker.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/log_lines.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/readme_acl.hpp"

using namespace rowpump::testing;
using nlohmann::json;
using rowpump::Outcome;

namespace {

constexpr std::int64_t kRows = 300;
constexpr std::int64_t kDeadId = 42;  // the SDK worker fails it once
constexpr const char* kDispatcherUser = "rowpump";
constexpr const char* kWorkerUser = "rowpump-worker-users";
// MySQL accounts with the documented grants for 'rowpump' and 'rowpump_admin' (the test bed's own
// all-privileges user is already called rowpump).
constexpr const char* kRunAccount = "rowpump_run";
constexpr const char* kAdminAccount = "rowpump_admin";

std::string password_of(const std::string& user) {
    return user + "-secret";
}

// The one line of docs/operations.md that starts with `prefix` and contains `part`.
std::string line_of_readme(const std::string& prefix, const std::string& part = "") {
    return rowpump::testing::readme_line(std::string(ROWPUMP_SOURCE_DIR) + "/docs/operations.md",
                                         prefix, part);
}

std::vector<std::string> readme_acl_words(const std::string& user) {
    return acl_words(line_of_readme("user " + user + " "));
}

// the documented ACL line for `user` as an ACL SETUSER command, with the user's own password.
std::vector<std::string> readme_acl_setuser(const std::string& user) {
    return acl_setuser(user, readme_acl_words(user), password_of(user));
}

// "SELECT, UPDATE" from the documented "GRANT SELECT, UPDATE ON app.t TO 'user'@'%';".
std::string readme_privileges(const std::string& user) {
    const std::string line = line_of_readme("GRANT ", "TO '" + user + "'@");
    const auto on = line.find(" ON ");
    if (on == std::string::npos) throw std::runtime_error("no ' ON ' in: " + line);
    return line.substr(6, on - 6);
}

// `user` with the privileges the docs grant `readme_user` on the task table, and nothing else.
void create_mysql_user(MysqlClient& root, const std::string& database, const std::string& user,
                       const std::string& readme_user) {
    for (const char* host : {"127.0.0.1", "localhost"}) {
        const std::string account = "'" + user + "'@'" + host + "'";
        root.exec("CREATE USER " + account + " IDENTIFIED BY " + sql_quote(password_of(user)));
        root.exec("GRANT " + readme_privileges(readme_user) + " ON `" + database +
                  "`.user_block_status TO " + account);
    }
}

rowpump::RedisAddress redis_login(const RedisServer& server, const std::string& user) {
    rowpump::RedisAddress address = server.options();
    address.user = user;
    address.password = password_of(user);
    return address;
}

// the documented two ACL users, and a password for the default user, so that a connection that
// forgot to log in is refused instead of running with every right. Returns a connection
// as the default user, for the test's own looks.
rowpump::redis::Connection create_redis_users(const RedisServer& server) {
    auto admin = server.connect();
    admin.command(readme_acl_setuser(kDispatcherUser));
    admin.command(readme_acl_setuser(kWorkerUser));
    admin.command({"ACL", "SETUSER", "default", "resetpass", ">" + password_of("default")});
    rowpump::RedisAddress address = server.options();
    address.password = password_of("default");
    return rowpump::redis::Connection::connect(address);
}

ConfigSpec config_as(const TestBed& bed, const std::string& mysql_user) {
    ConfigSpec spec = bed.config_spec({e2e_queue()});
    spec.user = mysql_user;
    spec.password = password_of(mysql_user);
    spec.redis_user = kDispatcherUser;
    spec.redis_password = password_of(kDispatcherUser);
    spec.extra_lines = {"due_count: { interval: 1s }"};  // the observer publishes soon
    return spec;
}

// The users of every client connection but the one asking.
std::multiset<std::string> client_users(rowpump::redis::Connection& redis) {
    std::multiset<std::string> users;
    std::istringstream lines(redis.command({"CLIENT", "LIST"}).string());
    for (std::string line; std::getline(lines, line);) {
        if (line.find(" cmd=client|list ") != std::string::npos) continue;
        const auto at = line.find(" user=");
        if (at == std::string::npos) continue;
        users.insert(line.substr(at + 6, line.find(' ', at + 6) - at - 6));
    }
    return users;
}

// The dispatcher (with its observer) and the workers are connected, each as the documented user
// for its side, and nobody else is.
void check_logins(rowpump::redis::Connection& redis) {
    const auto users = client_users(redis);
    INFO("clients' users: " << Catch::Detail::stringify(users));
    CHECK(users.count(kDispatcherUser) >= 1);
    CHECK(users.count(kWorkerUser) >= 1);
    CHECK(users.size() == users.count(kDispatcherUser) + users.count(kWorkerUser));
}

// Lines of a dispatcher log at error level, or at any level naming a refusal (retries of a
// failure are logged at debug only).
std::vector<std::string> troubled_lines(const std::string& log) {
    return log_lines(log, [](const std::string& level, const std::string& line) {
        return level == "error" || line.find("NOPERM") != std::string::npos ||
               line.find("NOAUTH") != std::string::npos || line.find("denied") != std::string::npos;
    });
}

std::int64_t count(MysqlClient& db, const std::string& where) {
    return db.scalar("SELECT COUNT(*) FROM user_block_status WHERE " + where);
}

}  // namespace

TEST_CASE(
    "least privilege: check, run, status, dead and retry as the documented MySQL grant and Redis "
    "ACL "
    "users, workers as the worker ACL user",
    "[e2e][privilege]") {
    TestBed bed;
    MysqlClient db = bed.db();  // every privilege: sets up and reads the data
    create_e2e_table(db);
    insert_e2e_rows(db, 1, kRows);
    MysqlClient root = bed.mysql.connect_root();
    create_mysql_user(root, bed.database, kAdminAccount, "rowpump_admin");
    create_mysql_user(root, bed.database, kRunAccount, "rowpump");
    auto redis = create_redis_users(bed.redis);

    migrate_apply(write_config(bed.dir.file("admin.yaml"), config_as(bed, kAdminAccount)));
    const std::string config =
        write_config(bed.dir.file("rowpump.yaml"), config_as(bed, kRunAccount));

    SECTION("the users hold nothing beyond what the docs grant") {
        MysqlLogin login = bed.mysql.login(bed.database);
        login.user = kRunAccount;
        login.password = password_of(kRunAccount);
        MysqlClient restricted = MysqlClient::connect(login);
        CHECK_THROWS_WITH(restricted.exec("DELETE FROM user_block_status"),
                          Catch::Contains("command denied"));
        CHECK_THROWS_WITH(restricted.exec("ALTER TABLE user_block_status ADD COLUMN x INT"),
                          Catch::Contains("command denied"));
        auto dispatcher_redis =
            rowpump::redis::Connection::connect(redis_login(bed.redis, kDispatcherUser));
        CHECK_THROWS_WITH(dispatcher_redis.command({"GET", "elsewhere"}),
                          Catch::Contains("NOPERM"));
        CHECK_THROWS_WITH(dispatcher_redis.command({"FLUSHALL"}), Catch::Contains("NOPERM"));
        auto worker_redis =
            rowpump::redis::Connection::connect(redis_login(bed.redis, kWorkerUser));
        CHECK_THROWS_WITH(worker_redis.command({"HSET", "rowpump:{users}:meta", "values", ""}),
                          Catch::Contains("NOPERM"));
        CHECK_THROWS_WITH(bed.redis.connect().command({"PING"}), Catch::Contains("NOAUTH"));
    }

    SECTION("rows are processed once, a dead row is listed and revived") {
        const RunResult check = rowpump_cli({"check", "-c", config});
        INFO(check.describe());
        REQUIRE(check.status.success());

        // Leftovers for the dispatcher to clean up, so that the commands doing that run too: a
        // worker listed without a heartbeat (reaped) and a long-gone dispatcher (forgotten).
        const auto keys = rowpump::protocol::keys_for("users");
        redis.command({"SADD", keys.workers, "ghost"});
        redis.command({"HSET", keys.dispatchers, "gone:1",
                       rowpump::protocol::format_dispatcher_entry(
                           "standby", rowpump::protocol::unix_ms() - 3600 * 1000)});
        auto dispatcher = bed.start_dispatcher(config);
        rowpump::WorkerOptions options;
        options.redis = redis_login(bed.redis, kWorkerUser);
        options.queue = "users";
        options.worker_id = "sdk";
        options.threads = 2;
        options.batch = 4;         // takes by script (LMOVE); the example worker blocks in BLMOVE
        std::mutex sdk_log_mutex;  // the SDK logs from its threads
        std::vector<std::string> sdk_log;
        options.log = [&](const std::string& line) {
            std::lock_guard<std::mutex> lock(sdk_log_mutex);
            sdk_log.push_back(line);
        };
        rowpump::Worker sdk_worker(options);
        {
            RunningWorker running(sdk_worker, [](const rowpump::Task& task) {
                if (task.id == std::to_string(kDeadId)) return Outcome::fail("failed on purpose");
                return Outcome::success({{"status", "1"}});
            });
            const bool settled = eventually(60s, [&] {
                return count(db, "status = 0") == 1 && count(db, "rp_dead_at IS NOT NULL") == 1;
            });
            INFO(dispatcher->log_tail());
            REQUIRE(settled);
            check_logins(redis);
            running.stop_and_join();
        }
        INFO("SDK log: " << Catch::Detail::stringify(sdk_log));

        const RunResult dead = rowpump_cli({"dead", "-c", config, "users"});
        INFO(dead.describe());
        REQUIRE(dead.status.success());
        CHECK(dead.out.find("\n" + std::to_string(kDeadId) + "\t1\t") != std::string::npos);
        CHECK(dead.out.find("failed on purpose") != std::string::npos);

        const RunResult revived =
            rowpump_cli({"retry", "-c", config, "users", std::to_string(kDeadId)});
        INFO(revived.describe());
        REQUIRE(revived.status.success());
        for (const char* command : {"pause", "resume"}) {
            const RunResult steered = rowpump_cli({command, "-c", config, "users"});
            INFO(steered.describe());
            CHECK(steered.status.success());
        }

        // More rows, for the example worker, which logs in with its password in a file.
        insert_e2e_rows(db, kRows + 1, kRows);
        const std::string password_file = bed.dir.file("worker-password");
        write_file(password_file, password_of(kWorkerUser) + "\n");
        SpawnOptions spawn = log_to(bed.dir.file("example-worker.log"));
        ChildProcess example(
            {ROWPUMP_EXAMPLE_WORKER, "--redis-port", std::to_string(bed.redis.port()),
             "--redis-user", kWorkerUser, "--redis-password-file", password_file, "--queue",
             "users", "--threads", "2"},
            spawn);
        const bool done = eventually(60s, [&] { return count(db, "status = 0") == 0; });
        INFO("example worker: " << read_file(bed.dir.file("example-worker.log")));
        INFO(dispatcher->log_tail());
        REQUIRE(done);
        check_logins(redis);

        // The leader's observer publishes its role and due count (HSET, DEL, PEXPIRE).
        RunResult status;
        json look;
        const bool published = eventually(15s, [&] {
            status = rowpump_cli({"status", "-c", config, "--json"});
            look = status.status.success() ? json::parse(status.out) : json{};
            return look["leader"].is_string() && look["due_counted_by"] == look["leader"];
        });
        INFO(status.describe());
        REQUIRE(published);
        CHECK(look["queue"] == "users");
        CHECK(look["due"] == 0);
        CHECK(look["counters"]["dead"] == 1);

        CHECK(example.stop(10s).success());
        CHECK(dispatcher->process().stop(10s).success());
        CHECK(count(db, "runs <> 1") == 0);  // every row once, the revived one included
        CHECK(count(db, "rp_dead_at IS NOT NULL") == 0);
        CHECK(redis.command({"SISMEMBER", keys.workers, "ghost"}).integer() == 0);
        CHECK(redis.command({"HEXISTS", keys.dispatchers, "gone:1"}).integer() == 0);
        CHECK(queue_stat(redis, "users", "completed") == 2 * kRows);
        CHECK(troubled_lines(dispatcher->log()).empty());
        CHECK(read_file(bed.dir.file("example-worker.log")).empty());
        CHECK(sdk_log.empty());
    }
}

// Per-key limits (docs/fairness.md) as the documented users: `check`, `rowpump limit set`,
// `list` and `unset`, and a dispatcher whose pushes check and record rate_per_key (key_rate)
// and which reads the key_limits hash, with nothing refused.
TEST_CASE("least privilege: rate_per_key and rowpump limit as the documented dispatcher ACL user",
          "[privilege][group_by]") {
    TestBed bed;
    MysqlClient db = bed.db();
    db.exec(
        "CREATE TABLE user_block_status (user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL "
        "DEFAULT 0, updated_time DATETIME(3) NOT NULL, runs INT NOT NULL DEFAULT 0, tenant INT "
        "NOT NULL, KEY (updated_time), KEY tenant_id (tenant, user_id)) ENGINE=InnoDB");
    db.exec(
        "INSERT INTO user_block_status (user_id, updated_time, tenant) SELECT seq, NOW(3), 1 + "
        "seq % 3 FROM seq_1_to_60");
    MysqlClient root = bed.mysql.connect_root();
    create_mysql_user(root, bed.database, kAdminAccount, "rowpump_admin");
    create_mysql_user(root, bed.database, kRunAccount, "rowpump");
    auto redis = create_redis_users(bed.redis);
    const auto spec_as = [&](const std::string& account) {
        ConfigSpec spec = config_as(bed, account);
        spec.queues[0].extra_lines = {"group_by: tenant", "rate_per_key: 5/1s"};
        return spec;
    };
    migrate_apply(write_config(bed.dir.file("admin.yaml"), spec_as(kAdminAccount)));
    const std::string config = write_config(bed.dir.file("rowpump.yaml"), spec_as(kRunAccount));

    const RunResult check = rowpump_cli({"check", "-c", config});
    INFO(check.describe());
    CHECK(check.status.success());
    CHECK(check.out.find("group_by tenant: rate_per_key 5/1s (on the Redis clock)") !=
          std::string::npos);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"set", "-c", config, "users", "1", "weight", "2"},
          std::vector<std::string>{"set", "-c", config, "users", "2", "rate", "20/1s"},
          std::vector<std::string>{"list", "-c", config, "users"},
          std::vector<std::string>{"unset", "-c", config, "users", "1"}}) {
        std::vector<std::string> argv = {"limit"};
        argv.insert(argv.end(), args.begin(), args.end());
        const RunResult limit = rowpump_cli(argv);
        INFO(limit.describe());
        CHECK(limit.status.success());
    }
    auto dispatcher = bed.start_dispatcher(config);
    const bool all = eventually(30s, [&] { return list_length(redis, ready_key("users")) == 60; });
    INFO(dispatcher->log_tail());
    REQUIRE(all);
    CHECK(redis.command({"EXISTS", "rowpump:{users}:key_rate"}).integer() == 1);
    CHECK(troubled_lines(dispatcher->log()).empty());
    CHECK(dispatcher->log_count("key_limits") == 0);  // read, nothing refused
}

TEST_CASE(
    "the example worker takes its Redis password from ROWPUMP_REDIS_PASSWORD or a file, not both",
    "[privilege]") {
    TempDir dir("rowpump-it-");
    RedisServer server;
    server.connect().command({"ACL", "SETUSER", kWorkerUser, "on", ">right", "~*", "+@all"});
    const std::vector<std::string> login{ROWPUMP_EXAMPLE_WORKER, "--redis-port",
                                         std::to_string(server.port()), "--redis-user",
                                         kWorkerUser};
    auto with_file = [&](const std::string& path) {
        auto argv = login;
        argv.insert(argv.end(), {"--redis-password-file", path});
        return argv;
    };
    write_file(dir.file("wrong"), "wrong\n");
    write_file(dir.file("empty"), "\n");
    struct Case {
        std::vector<std::string> argv;
        std::vector<std::pair<std::string, std::string>> env;
        int exit_code;
        std::string error;
    };
    const std::vector<Case> cases{
        {login, {{"ROWPUMP_REDIS_PASSWORD", "wrong"}}, 1, "WRONGPASS"},
        {with_file(dir.file("wrong")), {}, 1, "WRONGPASS"},
        {with_file(dir.file("wrong")),
         {{"ROWPUMP_REDIS_PASSWORD", "wrong"}},
         2,
         "the Redis password is given twice"},
        {with_file(dir.file("missing")), {}, 2, "cannot read --redis-password-file"},
        {with_file(dir.file("empty")), {}, 2, "is empty"},
    };
    for (const auto& c : cases) {
        const RunResult result = run_program(c.argv, 30s, c.env);
        INFO(result.describe());
        CHECK(result.status.exited());
        CHECK(result.status.code() == c.exit_code);
        CHECK(result.err.find(c.error) != std::string::npos);
    }
}

namespace {

// The worker's side of the protocol, step by step, as a worker of queue "users" logged in as
// `user`, against scripts the dispatcher loaded: "" when every step went through, else the
// first step refused and why.
std::string walk_worker_protocol(const RedisServer& server, const std::string& user) {
    namespace protocol = rowpump::protocol;
    auto admin = server.connect();
    admin.command({"FLUSHALL"});
    rowpump::redis::Script::load(
        admin, {&protocol::kTakeScript, &protocol::kCompleteScript, &protocol::kGiveBackScript,
                &protocol::kLeaveScript, &protocol::kBeatScript});
    const auto keys = protocol::keys_for("users");
    admin.command({"HSET", keys.meta, "values", "status", "lease", "60s"});
    admin.command({"RPUSH", keys.ready, "1:a", "2:b", "3:c", "4:d", "5:e"});
    const std::string processing = keys.processing("w");
    const std::string heartbeat = keys.heartbeat("w");
    auto sha = [](const rowpump::redis::Script& script) { return std::string(script.sha1()); };
    const std::vector<std::pair<std::string, std::vector<std::string>>> steps{
        {"heartbeat",
         {"EVALSHA", sha(protocol::kBeatScript), "4", heartbeat, keys.workers, processing,
          keys.done, "w", "incarnation=0123456789abcdef", "10000", "0123456789abcdef",
          " retry delay=0ms"}},
        {"look at a heartbeat", {"GET", heartbeat}},
        {"its age", {"PTTL", heartbeat}},
        {"queue known", {"EXISTS", keys.meta}},
        {"declared values", {"HGET", keys.meta, "values"}},
        {"take, blocking", {"BLMOVE", keys.ready, processing, "LEFT", "RIGHT", "0.1"}},
        {"take one", {"LMOVE", keys.ready, processing, "LEFT", "RIGHT"}},
        {"take several", {"EVALSHA", sha(protocol::kTakeScript), "2", keys.ready, processing, "2"}},
        {"report",
         {"EVALSHA", sha(protocol::kCompleteScript), "2", processing, keys.done, "1:a",
          "1:a ok status=1"}},
        {"set aside",
         {"EVALSHA", sha(protocol::kCompleteScript), "2", processing, keys.bad, "2:b", "2:b"}},
        {"extend", {"RPUSH", keys.done, "3:c extend lease=1m"}},
        {"list held tasks", {"LRANGE", processing, "0", "-1"}},
        {"give back", {"EVALSHA", sha(protocol::kGiveBackScript), "2", processing, keys.ready}},
        {"nudge", {"PUBLISH", keys.nudge, "1"}},
        {"leave",
         {"EVALSHA", sha(protocol::kLeaveScript), "3", heartbeat, processing, keys.workers, "w",
          "0123456789abcdef"}},
    };
    rowpump::RedisAddress address = server.options();
    address.user = user;
    address.password = password_of(user);
    auto worker = rowpump::redis::Connection::connect(address);
    for (const auto& [step, command] : steps) {
        try {
            worker.command(command);
        } catch (const rowpump::redis::ReplyError& e) {
            return step + ": " + e.what();
        }
    }
    // Each step did its part: everything left went back to the ready list, the worker left.
    if (list_length(admin, keys.ready) != 3 || list_length(admin, keys.done) != 2 ||
        list_length(admin, keys.bad) != 1 || admin.command({"EXISTS", heartbeat}).integer() != 0 ||
        admin.command({"SCARD", keys.workers}).integer() != 0) {
        return "the walk went through but left the keys in another state";
    }
    return "";
}

}  // namespace

TEST_CASE(
    "least privilege: the documented worker line walks the worker's protocol and without any one "
    "of its "
    "words is refused",
    "[privilege]") {
    RedisServer server;
    auto admin = server.connect();
    const auto words = readme_acl_words(kWorkerUser);
    admin.command(acl_setuser(kWorkerUser, words, password_of(kWorkerUser)));
    CHECK(walk_worker_protocol(server, kWorkerUser).empty());

    // Each permission out, one at a time (a selector's words one by one, the rest of the
    // selector kept).
    std::vector<std::vector<std::string>> fewer;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const auto& word = words[i];
        if (word == "reset" || word == "on" || word[0] == '>') continue;
        if (word.front() != '(') {
            auto line = words;
            line.erase(line.begin() + static_cast<std::ptrdiff_t>(i));
            fewer.push_back(line);
            continue;
        }
        const auto inner = acl_words("user x " + word.substr(1, word.size() - 2));
        for (std::size_t j = 0; j < inner.size(); ++j) {
            std::string selector = "(";
            for (std::size_t k = 0; k < inner.size(); ++k) {
                if (k == j) continue;
                selector += (selector.size() > 1 ? " " : "") + inner[k];
            }
            auto line = words;
            line[i] = selector + ")";
            fewer.push_back(line);
        }
    }
    CHECK(fewer.size() >= 20);
    for (const auto& line : fewer) {
        admin.command({"ACL", "DELUSER", kWorkerUser});
        admin.command(acl_setuser(kWorkerUser, line, password_of(kWorkerUser)));
        const auto refused = walk_worker_protocol(server, kWorkerUser);
        INFO("user " << kWorkerUser << " " << Catch::Detail::stringify(line));
        // A command a script calls is refused as "... can't run this command ...", a key it
        // touches as "... can't access at least one of the keys ...".
        CHECK_THAT(refused, Catch::Contains("NOPERM") ||
                                Catch::Contains("The user executing the script can't run") ||
                                Catch::Contains("The user executing the script can't access"));
    }
}

TEST_CASE(
    "least privilege: a worker that may not EVAL waits after Redis lost its scripts until the "
    "dispatcher loads them again",
    "[privilege]") {
    constexpr std::int64_t kRows = 200;
    E2eSystem sys(e2e_queue(), kRows);
    sys.redis.command(readme_acl_setuser(kWorkerUser));
    rowpump::WorkerOptions options;
    options.redis = redis_login(sys.bed.redis, kWorkerUser);
    options.queue = "users";
    options.worker_id = "sdk";
    options.batch = 4;
    std::mutex log_mutex;
    std::vector<std::string> log;
    options.log = [&](const std::string& line) {
        std::lock_guard<std::mutex> lock(log_mutex);
        log.push_back(line);
    };
    rowpump::Worker worker(options);
    RunningWorker running(worker, [](const rowpump::Task&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        return Outcome::success({{"status", "1"}});
    });
    REQUIRE(eventually(30s, [&] { return count(sys.db, "status = 1") > 0; }));
    // Redis loses its scripts (a restart, or a replica that never ran them) while the
    // dispatcher is frozen: the worker's next EVALSHA gets NOSCRIPT, and its EVAL is refused.
    sys.dispatcher->signal(SIGSTOP);
    sys.redis.command({"SCRIPT", "FLUSH"});
    auto logged_waiting = [&] {
        std::lock_guard<std::mutex> lock(log_mutex);
        return std::any_of(log.begin(), log.end(), [](const std::string& line) {
            return line.find("may not run EVAL; waiting for a dispatcher to load the scripts") !=
                   std::string::npos;
        });
    };
    const bool waited = eventually(20s, logged_waiting);
    sys.dispatcher->signal(SIGCONT);
    CHECK(waited);
    insert_e2e_rows(sys.db, kRows + 1, kRows);
    const bool done = eventually(60s, [&] { return sys.rows_left() == 0; });
    std::lock_guard<std::mutex> lock(log_mutex);
    INFO("SDK log: " << Catch::Detail::stringify(log) << "; " << sys.dispatcher->log_tail());
    REQUIRE(done);
    CHECK(sys.rows_not_run_once() == 0);
}
