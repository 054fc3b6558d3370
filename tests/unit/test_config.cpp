#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "config_text.hpp"
#include "rowpump/dispatcher/config/config.hpp"

using namespace rowpump;

namespace {

ConfigError error_of(const std::string& text) {
    try {
        parse_config(text, "test.yaml");
    } catch (const ConfigError& e) {
        return e;
    }
    FAIL("loaded without an error:\n" << text);
    throw std::logic_error("unreachable");
}

// Checks every part of the error and the exact message built from them.
void check_config_error(const std::string& text, int line, const std::string& key,
                        const std::string& problem) {
    const auto e = error_of(text);
    CHECK(e.file() == "test.yaml");
    CHECK(e.line() == line);
    CHECK(e.key() == key);
    CHECK(e.problem() == problem);
    CHECK(std::string(e.what()) ==
          "test.yaml:" + std::to_string(line) + ": " + key + ": " + problem);
}

// A macro so that a failure names the line of the expectation.
#define CHECK_CONFIG_ERROR(text, line, key, problem)          \
    do {                                                      \
        INFO("expectation at line " << __LINE__);             \
        check_config_error((text), (line), (key), (problem)); \
    } while (false)

// Sets an environment variable for the lifetime of the object.
class EnvVar {
public:
    EnvVar(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
    ~EnvVar() { ::unsetenv(name_); }
    EnvVar(const EnvVar&) = delete;
    EnvVar& operator=(const EnvVar&) = delete;

private:
    const char* name_;
};

const char* const kIdentifierRule =
    "is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_$]*, at most 64 characters)";

}  // namespace

TEST_CASE("a minimal config gets the documented defaults", "[config]") {
    auto config = parsed(with_queue_lines(""));
    CHECK(config.file == "test.yaml");
    CHECK(config.mysql.host == "127.0.0.1");
    CHECK(config.mysql.port == 3306);
    CHECK(config.mysql.user == "rowpump");
    CHECK(config.mysql.password == "");
    CHECK(config.mysql.database == "app");
    CHECK(config.mysql.connect_timeout == Millis(2000));
    CHECK(config.redis.host == "127.0.0.1");
    CHECK(config.redis.port == 6379);
    CHECK(config.redis.user == "");
    CHECK(config.redis.password == "");
    CHECK(config.log_level == "info");
    CHECK(config.outage_summary_interval == Millis(30000));
    REQUIRE(config.queues.size() == 1);
    const auto& q = config.queues[0];
    CHECK(q.name == "q");
    CHECK(q.table == "jobs");
    CHECK(q.id == "job_id");
    CHECK(q.due.text == "status = 0");
    CHECK(q.due.placeholders.empty());
    CHECK(q.order_by.empty());
    CHECK(q.batch == 1000);
    CHECK(q.lease == Millis(60000));
    CHECK(q.max_lease == Millis(24 * 60 * 60 * 1000));
    CHECK(q.max_backlog == 10000);
    CHECK_FALSE(q.rate);
    CHECK_FALSE(q.on_success);
    CHECK_FALSE(q.on_dead);
    CHECK(q.retry.base == Millis(1000));
    CHECK(q.retry.cap == Millis(300000));
    CHECK(q.retry.max_attempts == 10);
    CHECK(q.poll_min == Millis(50));
    CHECK(q.poll_max == Millis(1000));
    CHECK(q.reap_interval == Millis(1000));
    CHECK(q.leader_timeout == Millis(3000));
    CHECK(q.columns.token == "rp_token");
    CHECK(q.columns.lease == "rp_lease_until");
    CHECK(q.columns.attempts == "rp_attempts");
    CHECK(q.columns.error == "rp_last_error");
    CHECK(q.columns.dead == "rp_dead_at");
    CHECK(q.columns.lease_index == "rp_lease_idx");
}

TEST_CASE("every key is read", "[config]") {
    auto config = parsed(R"(
mysql: { host: db.local, port: 3307, user: u, password: "p w", database: d, connect_timeout: 3s }
redis: { host: cache.local, port: 6380, user: ru, password: rp, connect_timeout: 500ms }
log_level: debug
outage_summary_interval: 1m
queues:
  user_block_check:
    table: user_block_status
    id: user_id
    due: "updated_time < NOW(3) - INTERVAL 10 SECOND"
    order_by: updated_time DESC, user_id
    batch: 100000
    lease: 1m30s
    max_lease: 2h
    max_backlog: 20000
    rate: "1/3s"
    on_success: "status = :status, note = :note, updated_time = NOW(3), again = :status"
    on_dead: "status = 3"
    retry: { base: 2s, cap: 2s, max_attempts: 1 }
    poll: { min: 10ms, max: 10ms }
    reap_interval: 5s
    leader_timeout: 10s
    columns: { token: t, lease: l, attempts: a, error: e, dead: d, lease_index: li }
  second.queue-2:
    table: other
    id: id
    due: "1"
)");
    CHECK(config.mysql.host == "db.local");
    CHECK(config.mysql.port == 3307);
    CHECK(config.mysql.user == "u");
    CHECK(config.mysql.password == "p w");
    CHECK(config.mysql.database == "d");
    CHECK(config.mysql.connect_timeout == Millis(3000));
    CHECK(config.redis.host == "cache.local");
    CHECK(config.redis.port == 6380);
    CHECK(config.redis.user == "ru");
    CHECK(config.redis.password == "rp");
    CHECK(config.redis.connect_timeout == Millis(500));
    CHECK(config.log_level == "debug");
    CHECK(config.outage_summary_interval == Millis(60000));
    REQUIRE(config.queues.size() == 2);
    const auto& q = config.queues[0];
    CHECK(q.name == "user_block_check");
    CHECK(q.table == "user_block_status");
    CHECK(q.id == "user_id");
    CHECK(q.due.text == "updated_time < NOW(3) - INTERVAL 10 SECOND");
    REQUIRE(q.order_by.size() == 2);
    CHECK(q.order_by[0].column == "updated_time");
    CHECK(q.order_by[0].descending);
    CHECK(q.order_by[1].column == "user_id");
    CHECK_FALSE(q.order_by[1].descending);
    CHECK(q.batch == 100000);
    CHECK(q.lease == Millis(90000));
    CHECK(q.max_lease == Millis(2 * 60 * 60 * 1000));
    CHECK(q.max_backlog == 20000);
    REQUIRE(q.rate);
    CHECK(q.rate->count == 1);
    CHECK(q.rate->per == Millis(3000));
    REQUIRE(q.on_success);
    CHECK(q.on_success->placeholders == std::vector<std::string>{"status", "note"});
    REQUIRE(q.on_dead);
    CHECK(q.on_dead->text == "status = 3");
    CHECK(q.retry.base == Millis(2000));
    CHECK(q.retry.cap == Millis(2000));
    CHECK(q.retry.max_attempts == 1);
    CHECK(q.poll_min == Millis(10));
    CHECK(q.poll_max == Millis(10));
    CHECK(q.reap_interval == Millis(5000));
    CHECK(q.leader_timeout == Millis(10000));
    CHECK(q.columns.token == "t");
    CHECK(q.columns.lease == "l");
    CHECK(q.columns.attempts == "a");
    CHECK(q.columns.error == "e");
    CHECK(q.columns.dead == "d");
    CHECK(q.columns.lease_index == "li");
    CHECK(config.queues[1].name == "second.queue-2");

    REQUIRE(config.find_queue("second.queue-2") == &config.queues[1]);
    REQUIRE(config.find_queue("user_block_check") == &config.queues[0]);
    CHECK(config.find_queue("nope") == nullptr);
    CHECK(config.find_queue("") == nullptr);
}

TEST_CASE("unknown keys are rejected where they are", "[config]") {
    CHECK_CONFIG_ERROR("mysqll: {}\n", 1, "mysqll",
                       "unknown key (expected one of: mysql, redis, log_level, "
                       "outage_summary_interval, queues, http, due_count)");
    CHECK_CONFIG_ERROR(
        "mysql:\n  user: u\n  database: d\n  pasword: x\n", 4, "mysql.pasword",
        "unknown key (expected one of: host, port, user, password, database, connect_timeout, "
        "tls)");
    CHECK_CONFIG_ERROR(
        "mysql: { user: u, database: d }\nredis: { db: 1 }\n", 2, "redis.db",
        "unknown key (expected one of: host, port, sentinels, master, cluster, user, password, "
        "connect_timeout)");
    CHECK_CONFIG_ERROR(
        with_queue_lines("    bacth: 5\n"), 7, "queues.q.bacth",
        "unknown key (expected one of: table, id, due, order_by, batch, lease, "
        "max_lease, max_backlog, rate, on_success, on_dead, retry, poll, reap_interval, "
        "leader_timeout, columns, due_since, shards, claim, payload, payload_max, group_by, "
        "concurrency_per_key, rate_per_key)");
    CHECK_CONFIG_ERROR(with_queue_lines("    retry:\n      base: 1s\n      kap: 5m\n"), 9,
                       "queues.q.retry.kap",
                       "unknown key (expected one of: base, cap, max_attempts, max_delay)");
    CHECK_CONFIG_ERROR(with_queue_lines("    poll: { min: 1s, mx: 2s }\n"), 7, "queues.q.poll.mx",
                       "unknown key (expected one of: min, max)");
    CHECK_CONFIG_ERROR(
        with_queue_lines("    columns: { token: t, owner: o }\n"), 7, "queues.q.columns.owner",
        "unknown key (expected one of: token, lease, attempts, error, dead, lease_index)");
}

TEST_CASE("duplicate keys and duplicate queues are rejected", "[config]") {
    CHECK_CONFIG_ERROR("mysql: { user: a, database: d, user: b }\n", 1, "mysql.user",
                       "given twice (first at line 1)");
    CHECK_CONFIG_ERROR(with_queue_lines("    batch: 5\n    batch: 6\n"), 8, "queues.q.batch",
                       "given twice (first at line 7)");
    CHECK_CONFIG_ERROR(with_queue_lines("  q:\n" + kBody), 7, "queues.q",
                       "given twice (first at line 3)");
}

TEST_CASE("values of the wrong type are rejected", "[config]") {
    CHECK_CONFIG_ERROR("mysql: app\n", 1, "mysql", "must be a map, got 'app'");
    CHECK_CONFIG_ERROR("mysql:\nqueues: {}\n", 1, "mysql", "must be a map, got nothing");
    CHECK_CONFIG_ERROR("mysql: { user: [a, b], database: d }\n", 1, "mysql.user",
                       "must be a string, got a list");
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d, port: abc }\n", 1, "mysql.port",
                       "must be an integer, got 'abc'");
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d, port: 3306.5 }\n", 1, "mysql.port",
                       "must be an integer, got '3306.5'");
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d, port: 0x10 }\n", 1, "mysql.port",
                       "must be an integer, got '0x10'");
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d }\nqueues: [q]\n", 2, "queues",
                       "must be a map of queue names to queue settings, got a list");
    CHECK_CONFIG_ERROR(kHead, 3, "queues.q", "must be a map, got nothing");
    CHECK_CONFIG_ERROR(kHead + "    - table\n", 4, "queues.q", "must be a map, got a list");
    CHECK_CONFIG_ERROR(with_queue_lines("    batch: [1]\n"), 7, "queues.q.batch",
                       "must be an integer, got a list");
    CHECK_CONFIG_ERROR(with_queue_lines("    batch: many\n"), 7, "queues.q.batch",
                       "must be an integer, got 'many'");
    CHECK_CONFIG_ERROR(kHead + "    table: { name: jobs }\n    id: job_id\n    due: x\n", 4,
                       "queues.q.table", "must be a string, got a map");
    CHECK_CONFIG_ERROR(with_queue_lines("    lease: 60\n"), 7, "queues.q.lease",
                       "must be a duration like 250ms, 10s or 5m, got '60'");
    CHECK_CONFIG_ERROR(with_queue_lines("    lease:\n"), 7, "queues.q.lease",
                       "must be a duration, got nothing");
    CHECK_CONFIG_ERROR(with_queue_lines("    retry: 5\n"), 7, "queues.q.retry",
                       "must be a map, got '5'");
    CHECK_CONFIG_ERROR(with_queue_lines("    poll: [1s, 2s]\n"), 7, "queues.q.poll",
                       "must be a map, got a list");
    CHECK_CONFIG_ERROR(with_queue_lines("    columns: rp\n"), 7, "queues.q.columns",
                       "must be a map, got 'rp'");
    CHECK_CONFIG_ERROR(with_queue_lines("    rate: { count: 1 }\n"), 7, "queues.q.rate",
                       "must be a rate like 1/3s, got a map");
    CHECK_CONFIG_ERROR(with_queue_lines("    on_success: [a]\n"), 7, "queues.q.on_success",
                       "must be a string, got a list");
}

TEST_CASE("required keys are reported at their parent map", "[config]") {
    CHECK_CONFIG_ERROR("queues: {}\n", 1, "mysql", "is required");
    CHECK_CONFIG_ERROR("\n# a comment\nlog_level: info\nmysql: { user: u, database: d }\n", 3,
                       "queues", "is required");
    CHECK_CONFIG_ERROR("log_level: info\nmysql: { database: d }\nqueues: {}\n", 2, "mysql.user",
                       "is required");
    CHECK_CONFIG_ERROR("log_level: info\nmysql:\n  user: u\nqueues: {}\n", 3, "mysql.database",
                       "is required");
    CHECK_CONFIG_ERROR(kHead + "    id: job_id\n    due: x\n", 4, "queues.q.table", "is required");
    CHECK_CONFIG_ERROR(kHead + "    table: jobs\n    due: x\n", 4, "queues.q.id", "is required");
    CHECK_CONFIG_ERROR(kHead + "    table: jobs\n    id: job_id\n", 4, "queues.q.due",
                       "is required");
    CHECK_CONFIG_ERROR("mysql: { user: '', database: d }\n", 1, "mysql.user", "must not be empty");
    CHECK_CONFIG_ERROR("mysql: { user: u, database: \"\" }\n", 1, "mysql.database",
                       "must not be empty");
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d, host: '' }\n", 1, "mysql.host",
                       "must not be empty");
}

TEST_CASE("queues must be a non-empty map of valid names", "[config]") {
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d }\nqueues: {}\n", 2, "queues",
                       "must define at least one queue");
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d }\nqueues:\n", 2, "queues",
                       "must be a map of queue names to queue settings, got nothing");
    const std::string rule = "' (1 to 64 characters from A-Z a-z 0-9 _ . -)";
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d }\nqueues:\n  bad name:\n" + kBody, 3,
                       "queues.bad name", "invalid queue name 'bad name" + rule);
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d }\nqueues:\n  \"q{1}\":\n" + kBody, 3,
                       "queues.q{1}", "invalid queue name 'q{1}" + rule);
    const std::string long_name(65, 'q');
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d }\nqueues:\n  " + long_name + ":\n" + kBody,
                       3, "queues." + long_name, "invalid queue name '" + long_name + rule);
}

TEST_CASE("numbers out of range are rejected", "[config]") {
    const std::string head = "mysql: { user: u, database: d";
    CHECK_CONFIG_ERROR(head + ", port: 0 }\n", 1, "mysql.port",
                       "must be between 1 and 65535, got 0");
    CHECK_CONFIG_ERROR(head + ", port: 65536 }\n", 1, "mysql.port",
                       "must be between 1 and 65535, got 65536");
    CHECK_CONFIG_ERROR(head + ", port: -1 }\n", 1, "mysql.port",
                       "must be between 1 and 65535, got -1");
    CHECK_CONFIG_ERROR(head + ", port: 99999999999999999999 }\n", 1, "mysql.port",
                       "must be between 1 and 65535, got 99999999999999999999");
    CHECK_CONFIG_ERROR(head + " }\nredis:\n  port: 70000\n", 3, "redis.port",
                       "must be between 1 and 65535, got 70000");
    CHECK(parsed(with_queue_lines("")).mysql.port == 3306);

    CHECK_CONFIG_ERROR(with_queue_lines("    batch: 0\n"), 7, "queues.q.batch",
                       "must be between 1 and 100000, got 0");
    CHECK_CONFIG_ERROR(with_queue_lines("    batch: -5\n"), 7, "queues.q.batch",
                       "must be between 1 and 100000, got -5");
    CHECK_CONFIG_ERROR(with_queue_lines("    batch: 100001\n"), 7, "queues.q.batch",
                       "must be between 1 and 100000, got 100001");
    CHECK(parsed(with_queue_lines("    batch: 1\n")).queues[0].batch == 1);
    CHECK_CONFIG_ERROR(with_queue_lines("    max_backlog: 0\n"), 7, "queues.q.max_backlog",
                       "must be at least 1, got 0");
    CHECK(parsed(with_queue_lines("    max_backlog: 1\n")).queues[0].max_backlog == 1);
    CHECK_CONFIG_ERROR(with_queue_lines("    retry: { max_attempts: 0 }\n"), 7,
                       "queues.q.retry.max_attempts", "must be between 1 and 2147483647, got 0");
    CHECK_CONFIG_ERROR(with_queue_lines("    retry: { max_attempts: 2147483648 }\n"), 7,
                       "queues.q.retry.max_attempts",
                       "must be between 1 and 2147483647, got 2147483648");
}

TEST_CASE("durations must be positive", "[config]") {
    CHECK_CONFIG_ERROR(with_queue_lines("    lease: 0s\n"), 7, "queues.q.lease",
                       "must be positive, got '0s'");
    CHECK_CONFIG_ERROR(with_queue_lines("    lease: -1s\n"), 7, "queues.q.lease",
                       "must be a duration like 250ms, 10s or 5m, got '-1s'");
    CHECK_CONFIG_ERROR(with_queue_lines("    reap_interval: 0ms\n"), 7, "queues.q.reap_interval",
                       "must be positive, got '0ms'");
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d }\noutage_summary_interval: 500ms\n", 2,
                       "outage_summary_interval", "must be at least 1s, got 500ms");
    CHECK_CONFIG_ERROR(with_queue_lines("    leader_timeout: 0s\n"), 7, "queues.q.leader_timeout",
                       "must be positive, got '0s'");
    CHECK_CONFIG_ERROR(with_queue_lines("    leader_timeout: 200ms\n"), 7,
                       "queues.q.leader_timeout", "must be between 300ms and 1h, got 200ms");
    CHECK_CONFIG_ERROR(with_queue_lines("    leader_timeout: 2h\n"), 7, "queues.q.leader_timeout",
                       "must be between 300ms and 1h, got 2h");
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d, connect_timeout: 0s }\n", 1,
                       "mysql.connect_timeout", "must be positive, got '0s'");
    CHECK_CONFIG_ERROR("mysql: { user: u, database: d }\nredis: { connect_timeout: 0s }\n", 2,
                       "redis.connect_timeout", "must be positive, got '0s'");
    CHECK_CONFIG_ERROR(with_queue_lines("    retry: { base: 0s }\n"), 7, "queues.q.retry.base",
                       "must be positive, got '0s'");
    CHECK_CONFIG_ERROR(with_queue_lines("    retry: { cap: 0s }\n"), 7, "queues.q.retry.cap",
                       "must be positive, got '0s'");
    CHECK_CONFIG_ERROR(with_queue_lines("    poll: { min: 0s }\n"), 7, "queues.q.poll.min",
                       "must be positive, got '0s'");
}

TEST_CASE("retry.cap >= retry.base and poll.max >= poll.min", "[config]") {
    CHECK_CONFIG_ERROR(with_queue_lines("    retry:\n      base: 10s\n      cap: 1s\n"), 9,
                       "queues.q.retry.cap", "must be at least retry.base (10s), got 1s");
    CHECK_CONFIG_ERROR(with_queue_lines("    retry: { cap: 500ms }\n"), 7, "queues.q.retry.cap",
                       "must be at least retry.base (1s), got 500ms");
    CHECK_CONFIG_ERROR(with_queue_lines("    retry: { base: 10m }\n"), 7, "queues.q.retry.base",
                       "must be at most retry.cap (5m, the default), got 10m");
    CHECK_CONFIG_ERROR(with_queue_lines("    poll:\n      min: 2s\n      max: 1s\n"), 9,
                       "queues.q.poll.max", "must be at least poll.min (2s), got 1s");
    CHECK_CONFIG_ERROR(with_queue_lines("    poll: { max: 10ms }\n"), 7, "queues.q.poll.max",
                       "must be at least poll.min (50ms), got 10ms");
    CHECK_CONFIG_ERROR(with_queue_lines("    poll: { min: 2s }\n"), 7, "queues.q.poll.min",
                       "must be at most poll.max (1s, the default), got 2s");
}

TEST_CASE("rates", "[config]") {
    auto rate_of = [](const std::string& text) {
        return parsed(with_queue_lines("    rate: \"" + text + "\"\n")).queues[0].rate;
    };
    auto r = rate_of("1/3s");
    REQUIRE(r);
    CHECK(r->count == 1);
    CHECK(r->per == Millis(3000));
    r = rate_of("500/1s");
    REQUIRE(r);
    CHECK(r->count == 500);
    CHECK(r->per == Millis(1000));
    r = rate_of("10/s");
    REQUIRE(r);
    CHECK(r->count == 10);
    CHECK(r->per == Millis(1000));

    const std::string shape = "must be a rate like 1/3s, 500/1s or 10/s, got '";
    CHECK_CONFIG_ERROR(with_queue_lines("    rate: fast\n"), 7, "queues.q.rate", shape + "fast'");
    CHECK_CONFIG_ERROR(with_queue_lines("    rate: 1/3\n"), 7, "queues.q.rate", shape + "1/3'");
    CHECK_CONFIG_ERROR(with_queue_lines("    rate: 0/1s\n"), 7, "queues.q.rate",
                       "must allow at least 1 dispatch per period, got '0/1s'");
    CHECK_CONFIG_ERROR(with_queue_lines("    rate: 1/0s\n"), 7, "queues.q.rate",
                       "must have a positive period, got '1/0s'");
}

TEST_CASE("parse_rate", "[config]") {
    struct Case {
        const char* text;
        std::int64_t count;
        std::int64_t per_ms;
    };
    for (const auto& c : {Case{"1/3s", 1, 3000}, Case{"500/1s", 500, 1000}, Case{"10/s", 10, 1000},
                          Case{"10/ms", 10, 1}, Case{"2/m", 2, 60000}, Case{"7/h", 7, 3600000},
                          Case{"3/1m30s", 3, 90000}, Case{"0/1s", 0, 1000}, Case{"1/0s", 1, 0}}) {
        INFO(c.text);
        auto rate = parse_rate(c.text);
        REQUIRE(rate);
        CHECK(rate->count == c.count);
        CHECK(rate->per.count() == c.per_ms);
    }
    for (const char* bad : {"", "/", "1", "1/", "/s", "a/s", "-1/s", "+1/s", "1/3", "1/3x", "1 /3s",
                            "1/ 3s", "1/3s/2", "1.5/s", "99999999999999999999/s", "1/-3s"}) {
        INFO("'" << bad << "'");
        CHECK_FALSE(parse_rate(bad));
    }
}

TEST_CASE("identifiers must be plain", "[config]") {
    const std::string rule = kIdentifierRule;
    CHECK_CONFIG_ERROR(kHead + "    table: user-table\n    id: job_id\n    due: x\n", 4,
                       "queues.q.table", "'user-table' " + rule);
    CHECK_CONFIG_ERROR(kHead + "    table: \"`jobs`\"\n    id: job_id\n    due: x\n", 4,
                       "queues.q.table", "'`jobs`' " + rule);
    CHECK_CONFIG_ERROR(kHead + "    table: app.jobs\n    id: job_id\n    due: x\n", 4,
                       "queues.q.table", "'app.jobs' " + rule);
    CHECK_CONFIG_ERROR(kHead + "    table: jobs\n    id: 1id\n    due: x\n", 5, "queues.q.id",
                       "'1id' " + rule);
    CHECK_CONFIG_ERROR(with_queue_lines("    order_by: updated-time\n"), 7, "queues.q.order_by",
                       "'updated-time' " + rule);
    CHECK_CONFIG_ERROR(with_queue_lines("    order_by: a DESC, RAND()\n"), 7, "queues.q.order_by",
                       "'RAND()' " + rule);
    CHECK_CONFIG_ERROR(with_queue_lines("    order_by: a sideways\n"), 7, "queues.q.order_by",
                       "expected ASC or DESC after 'a', got 'sideways'");
    for (const char* column : {"token", "lease", "attempts", "error", "dead", "lease_index"}) {
        INFO(column);
        CHECK_CONFIG_ERROR(
            with_queue_lines("    columns:\n      " + std::string(column) + ": \"x y\"\n"), 8,
            "queues.q.columns." + std::string(column), "'x y' " + rule);
    }
}

TEST_CASE("column names must be distinct from each other and from id", "[config]") {
    CHECK_CONFIG_ERROR(with_queue_lines("    columns: { lease: rp_token }\n"), 7,
                       "queues.q.columns.lease",
                       "column 'rp_token' is already used by queues.q.columns.token (its default)");
    CHECK_CONFIG_ERROR(with_queue_lines("    columns:\n      token: a\n      dead: A\n"), 9,
                       "queues.q.columns.dead",
                       "column 'A' is already used by queues.q.columns.token");
    CHECK_CONFIG_ERROR(with_queue_lines("    columns: { error: job_id }\n"), 7,
                       "queues.q.columns.error", "column 'job_id' is already used by queues.q.id");
    CHECK_CONFIG_ERROR(kHead + "    table: jobs\n    id: RP_ATTEMPTS\n    due: x\n", 5,
                       "queues.q.id",
                       "column 'RP_ATTEMPTS' is already used by queues.q.columns.attempts (its "
                       "default)");
    CHECK_CONFIG_ERROR(with_queue_lines("    columns: { token: rp_lease_until }\n"), 7,
                       "queues.q.columns.token",
                       "column 'rp_lease_until' is already used by queues.q.columns.lease (its "
                       "default)");
    // The index lives in its own namespace: it may share a name with a column.
    CHECK(parsed(with_queue_lines("    columns: { lease_index: rp_token }\n"))
              .queues[0]
              .columns.lease_index == "rp_token");
    // Swapping two defaults is fine.
    auto swapped = parsed(with_queue_lines("    columns: { token: rp_dead_at, dead: rp_token }\n"));
    CHECK(swapped.queues[0].columns.token == "rp_dead_at");
    CHECK(swapped.queues[0].columns.dead == "rp_token");
}

TEST_CASE("SQL fragments are checked", "[config]") {
    CHECK_CONFIG_ERROR(
        kHead + "    table: jobs\n    id: job_id\n    due: \"x = 1; DROP TABLE jobs\"\n", 6,
        "queues.q.due", "contains ';' (a fragment must be a single expression)");
    CHECK_CONFIG_ERROR(kHead + "    table: jobs\n    id: job_id\n    due: \"x = 1 -- y\"\n", 6,
                       "queues.q.due",
                       "contains the comment marker '--' outside a string literal (a comment "
                       "could hide the rest of the statement)");
    CHECK_CONFIG_ERROR(kHead + "    table: jobs\n    id: job_id\n    due: \"x = 'open\"\n", 6,
                       "queues.q.due", "has an unterminated string literal starting at column 5");
    CHECK_CONFIG_ERROR(kHead + "    table: jobs\n    id: job_id\n    due: \"x = ?\"\n", 6,
                       "queues.q.due",
                       "contains '?' outside a string literal (values come from :name "
                       "placeholders)");
    CHECK_CONFIG_ERROR(kHead + "    table: jobs\n    id: job_id\n    due: \"x = :limit\"\n", 6,
                       "queues.q.due", "must not contain placeholders, found ':limit'");
    CHECK_CONFIG_ERROR(kHead + "    table: jobs\n    id: job_id\n    due: \"\"\n", 6,
                       "queues.q.due", "is empty");
    CHECK_CONFIG_ERROR(with_queue_lines("    on_dead: \"status = :status\"\n"), 7,
                       "queues.q.on_dead", "must not contain placeholders, found ':status'");
    CHECK_CONFIG_ERROR(with_queue_lines("    on_success: \"took = :ms\"\n"), 7,
                       "queues.q.on_success",
                       "placeholder ':ms' is reserved: done messages carry the handler's "
                       "duration in ms=");
    CHECK_CONFIG_ERROR(with_queue_lines("    on_success: \"status = 1 # done\"\n"), 7,
                       "queues.q.on_success",
                       "contains the comment marker '#' outside a string literal (a comment "
                       "could hide the rest of the statement)");
    CHECK_CONFIG_ERROR(with_queue_lines("    on_success: \"a = 1 /* x */\"\n"), 7,
                       "queues.q.on_success",
                       "contains the comment marker '/*' outside a string literal (a comment "
                       "could hide the rest of the statement)");
    CHECK_CONFIG_ERROR(with_queue_lines("    on_dead: \"status = 3;\"\n"), 7, "queues.q.on_dead",
                       "contains ';' (a fragment must be a single expression)");
    const std::string long_name(65, 'v');
    CHECK_CONFIG_ERROR(with_queue_lines("    on_success: \"a = :" + long_name + "\"\n"), 7,
                       "queues.q.on_success",
                       "placeholder ':" + long_name + "' is longer than 64 characters");
    auto ok = parsed(
        with_queue_lines("    on_success: \"a = :" + std::string(64, 'v') + ", t = '12:30'\"\n"));
    CHECK(ok.queues[0].on_success->placeholders == std::vector<std::string>{std::string(64, 'v')});
}

TEST_CASE("log_level", "[config]") {
    for (const char* level : {"trace", "debug", "info", "warn", "error", "off"}) {
        CHECK(parsed(with_queue_lines("") + "log_level: " + level + "\n").log_level == level);
    }
    CHECK_CONFIG_ERROR(with_queue_lines("") + "log_level: verbose\n", 7, "log_level",
                       "must be one of trace, debug, info, warn, error, off; got 'verbose'");
    CHECK_CONFIG_ERROR(with_queue_lines("") + "log_level: INFO\n", 7, "log_level",
                       "must be one of trace, debug, info, warn, error, off; got 'INFO'");
}

TEST_CASE("environment variables are expanded in scalar values", "[config]") {
    EnvVar password("ROWPUMP_TEST_PASSWORD", "s3cr$t");
    EnvVar port("ROWPUMP_TEST_PORT", "3307");
    EnvVar empty("ROWPUMP_TEST_EMPTY", "");
    auto config = parsed(
        "mysql:\n"
        "  user: \"${ROWPUMP_TEST_EMPTY}u${ROWPUMP_TEST_EMPTY}\"\n"
        "  password: \"${ROWPUMP_TEST_PASSWORD}\"\n"
        "  port: ${ROWPUMP_TEST_PORT}\n"
        "  database: app\n"
        "  host: \"a$$b$c$\"\n"
        "queues:\n"
        "  q:\n" +
        kBody);
    CHECK(config.mysql.user == "u");
    CHECK(config.mysql.password == "s3cr$t");  // no second expansion of the value
    CHECK(config.mysql.port == 3307);
    CHECK(config.mysql.host == "a$b$c$");

    auto due = parsed(
        kHead + "    table: jobs\n    id: job_id\n    due: \"port = ${ROWPUMP_TEST_PORT}\"\n");
    CHECK(due.queues[0].due.text == "port = 3307");
}

TEST_CASE("environment variable problems name the variable", "[config]") {
    ::unsetenv("ROWPUMP_TEST_UNSET");
    CHECK_CONFIG_ERROR("mysql:\n  user: u\n  password: \"${ROWPUMP_TEST_UNSET}\"\n", 3,
                       "mysql.password", "environment variable ROWPUMP_TEST_UNSET is not set");
    CHECK_CONFIG_ERROR("mysql:\n  user: u\n  password: \"x${ROWPUMP_TEST_UNSET\"\n", 3,
                       "mysql.password", "unterminated '${' (write $$ for a literal $)");
    CHECK_CONFIG_ERROR("mysql:\n  user: \"${1X}\"\n", 2, "mysql.user",
                       "'${1X}' is not a valid environment variable reference");
    CHECK_CONFIG_ERROR("mysql:\n  user: \"${}\"\n", 2, "mysql.user",
                       "'${}' is not a valid environment variable reference");
    CHECK_CONFIG_ERROR("mysql:\n  user: \"${A:-b}\"\n", 2, "mysql.user",
                       "'${A:-b}' is not a valid environment variable reference");
    EnvVar bad_port("ROWPUMP_TEST_PORT", "http");
    CHECK_CONFIG_ERROR("mysql:\n  user: u\n  database: d\n  port: ${ROWPUMP_TEST_PORT}\n", 4,
                       "mysql.port", "must be an integer, got 'http'");
}

TEST_CASE("YAML syntax errors carry the line", "[config]") {
    auto e = error_of("mysql: { user: u, database: d }\nqueues:\n  q: [a\n  r: 1\n");
    CHECK(e.file() == "test.yaml");
    CHECK(e.line() == 4);
    CHECK(e.key() == "");
    CHECK(e.problem() == "invalid YAML: end of sequence flow not found");
    CHECK(std::string(e.what()) == "test.yaml:4: invalid YAML: end of sequence flow not found");

    // An unquoted ${VAR} in a flow map is YAML syntax, not an expansion.
    auto flow = error_of("mysql: { password: ${X} }\n");
    CHECK(flow.line() == 1);
    CHECK(flow.problem().rfind("invalid YAML: ", 0) == 0);

    auto tab = error_of("mysql:\n\tuser: u\n");
    CHECK(tab.line() == 2);
    CHECK(tab.problem().rfind("invalid YAML: ", 0) == 0);
}

TEST_CASE("the document must be one map", "[config]") {
    auto e = error_of("");
    CHECK(std::string(e.what()) ==
          "test.yaml:1: must be a YAML map with the keys mysql, redis, log_level and queues, got "
          "nothing");
    e = error_of("# only a comment\n");
    CHECK(e.line() == 1);
    CHECK(e.problem() ==
          "must be a YAML map with the keys mysql, redis, log_level and queues, got nothing");
    e = error_of("\n- a\n- b\n");
    CHECK(e.line() == 2);
    CHECK(e.problem() ==
          "must be a YAML map with the keys mysql, redis, log_level and queues, got a list");
    e = error_of(with_queue_lines("") + "---\nmysql: {}\n");
    CHECK(std::string(e.what()) == "test.yaml:8: holds more than one YAML document");
}

namespace {

// A directory of its own under the system temp dir, removed at the end of the test.
class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "rowpump-config-XXXXXX");
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string file(const std::string& name, const std::string& text) const {
        auto path = path_ / name;
        std::ofstream(path) << text;
        return path.string();
    }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace

TEST_CASE("load_config reads a file and names it in errors", "[config]") {
    TempDir dir;
    auto good = dir.file("good.yaml", with_queue_lines("    batch: 7\n"));
    auto config = load_config(good);
    CHECK(config.file == good);
    CHECK(config.queues[0].batch == 7);

    auto bad = dir.file("bad.yaml", with_queue_lines("    batch: 0\n"));
    try {
        load_config(bad);
        FAIL("loaded");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()) ==
              bad + ":7: queues.q.batch: must be between 1 and 100000, got 0");
    }
}

TEST_CASE("a file that cannot be read is an error on line 0", "[config]") {
    TempDir dir;
    const auto missing = (dir.path() / "missing.yaml").string();
    try {
        load_config(missing);
        FAIL("loaded");
    } catch (const ConfigError& e) {
        CHECK(e.file() == missing);
        CHECK(e.line() == 0);
        CHECK(e.key() == "");
        CHECK(std::string(e.what()) ==
              missing + ":0: cannot read '" + missing + "': No such file or directory");
    }
    const auto directory = dir.path().string();
    try {
        load_config(directory);
        FAIL("loaded");
    } catch (const ConfigError& e) {
        CHECK(e.line() == 0);
        CHECK(std::string(e.what()) ==
              directory + ":0: cannot read '" + directory + "': Is a directory");
    }
}

TEST_CASE("the example configs load", "[config]") {
    EnvVar password("ROWPUMP_MYSQL_PASSWORD", "example-password");
    const auto dir = std::filesystem::path(ROWPUMP_SOURCE_DIR) / "config";
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 3);
    for (const auto& file : files) {
        INFO(file);
        try {
            auto config = load_config(file);
            CHECK(config.mysql.password == "example-password");
            CHECK_FALSE(config.queues.empty());
        } catch (const ConfigError& e) {
            FAIL(e.what());
        }
    }

    auto recheck = load_config((dir / "periodic-recheck.yaml").string());
    REQUIRE(recheck.queues.size() == 1);
    const auto& check = recheck.queues[0];
    CHECK(check.name == "user_block_check");
    CHECK(check.table == "user_block_status");
    CHECK(check.id == "user_id");
    CHECK(check.due.text == "updated_time < NOW(3) - INTERVAL 10 SECOND");
    REQUIRE(check.on_success);
    CHECK(check.on_success->text == "status = :status, updated_time = NOW(3)");
    CHECK(check.on_success->placeholders == std::vector<std::string>{"status"});

    auto sharded = load_config((dir / "sharded.yaml").string());
    REQUIRE(sharded.queues.size() == 1);
    REQUIRE(sharded.queues[0].shards.size() == 3);
    CHECK(sharded.queues[0].shards[2].mysql.database == "app_ap");
    CHECK(sharded.queues[0].shards[2].mysql.password == "example-password");
    CHECK(sharded.queues[0].claim == ClaimMode::mysql);  // redis does not serve shards yet

    auto one_shot = load_config((dir / "one-shot.yaml").string());
    REQUIRE(one_shot.queues.size() == 1);
    const auto& jobs = one_shot.queues[0];
    CHECK(jobs.due.text == "status IN ('pending', 'failed')");  // a retried job is due again
    REQUIRE(jobs.on_success);
    CHECK(jobs.on_success->text.rfind("status = 'done'", 0) == 0);
    CHECK(jobs.on_success->placeholders.empty());
    REQUIRE(jobs.on_dead);
    CHECK(jobs.on_dead->text.rfind("status = 'failed'", 0) == 0);

    auto limited = load_config((dir / "rate-limited.yaml").string());
    REQUIRE(limited.queues.size() == 1);
    const auto& sync = limited.queues[0];
    REQUIRE(sync.rate);
    CHECK(sync.rate->count == 1);
    CHECK(sync.rate->per == Millis(3000));
    CHECK(sync.batch == 1);
}

TEST_CASE("http: listen, token and actions are read and checked", "[config]") {
    auto config = parse_config(with_queue_lines("") +
                                   "http: { listen: \"0.0.0.0:9100\", token: "
                                   "\"0123456789abcdef\", actions: true }\n",
                               "test.yaml");
    REQUIRE(config.http);
    CHECK(config.http->host == "0.0.0.0");
    CHECK(config.http->port == 9100);
    CHECK(config.http->actions);

    config = parse_config(with_queue_lines("") + "http: { listen: \"9464\" }\n", "test.yaml");
    REQUIRE(config.http);
    CHECK(config.http->host == "127.0.0.1");  // a bare port stays on loopback
    CHECK_FALSE(config.http->actions);
    CHECK_FALSE(parse_config(with_queue_lines(""), "test.yaml").http);

    CHECK_CONFIG_ERROR(with_queue_lines("") + "http: { actions: true }\n", 7, "http.actions",
                       "actions need http.token: without one anybody who reaches the port could "
                       "retry, discard and pause");
    CHECK_CONFIG_ERROR(with_queue_lines("") + "http: { token: short }\n", 7, "http.token",
                       "must be at least 16 characters");
    CHECK_CONFIG_ERROR(with_queue_lines("") + "http: { listen: \"host:port\" }\n", 7, "http.listen",
                       "must be host:port or a port, like 127.0.0.1:9464, got 'host:port'");
    CHECK_CONFIG_ERROR(with_queue_lines("") + "http: { listen: \"70000\" }\n", 7, "http.listen",
                       "must be host:port or a port, like 127.0.0.1:9464, got '70000'");
    CHECK_CONFIG_ERROR(with_queue_lines("") + "http: { lisen: \"9464\" }\n", 7, "http.lisen",
                       "unknown key (expected one of: listen, token, actions, read_token, hosts)");
    CHECK_CONFIG_ERROR(
        with_queue_lines("") + "http: { token: \"0123456789abcdef\", actions: yes }\n", 7,
        "http.actions", "must be true or false, got 'yes'");
}

TEST_CASE("http: beyond loopback the token is required and guards reads", "[config][security]") {
    auto config = parse_config(with_queue_lines("") +
                                   "http: { listen: \"0.0.0.0:9100\", token: "
                                   "\"0123456789abcdef\", hosts: [Dispatcher.Internal] }\n",
                               "test.yaml");
    CHECK(config.http->read_token);  // on by default beyond loopback
    CHECK(config.http->hosts == std::vector<std::string>{"dispatcher.internal"});
    config = parse_config(with_queue_lines("") + "http: { listen: \"9464\" }\n", "test.yaml");
    CHECK_FALSE(config.http->read_token);  // off on loopback
    config = parse_config(
        with_queue_lines("") + "http: { token: \"0123456789abcdef\", read_token: true }\n",
        "test.yaml");
    CHECK(config.http->read_token);

    CHECK_CONFIG_ERROR(with_queue_lines("") + "http: { listen: \"0.0.0.0:9100\" }\n", 7,
                       "http.listen",
                       "listening on 0.0.0.0 (beyond loopback) needs http.token: without one "
                       "anybody who reaches the port reads the queues' dead rows and errors");
    CHECK_CONFIG_ERROR(with_queue_lines("") + "http: { read_token: true }\n", 7, "http.read_token",
                       "read_token needs http.token: the token is what reads must present");
    CHECK_CONFIG_ERROR(with_queue_lines("") + "http: { hosts: [\"a.b:80\"] }\n", 7, "http.hosts[0]",
                       "must be a host name without port, like dispatcher.internal, got 'a.b:80'");
}

TEST_CASE("due_count and due_since are read and checked", "[config]") {
    auto config = parse_config(with_queue_lines("    due_since: \"updated_time\"\n") +
                                   "due_count: { interval: 2s, cap: 5000, timeout: 500ms }\n",
                               "test.yaml");
    CHECK(config.queues[0].due_since->text == "updated_time");
    CHECK(config.due_count.interval == Millis(2000));
    CHECK(config.due_count.cap == 5000);
    CHECK(config.due_count.timeout == Millis(500));
    // The default cap keeps a count of a large backlog to a tenth of a second or so.
    CHECK(parse_config(with_queue_lines(""), "test.yaml").due_count.cap == 100000);
    CHECK_CONFIG_ERROR(with_queue_lines("") + "due_count: { cap: 0 }\n", 7, "due_count.cap",
                       "must be between 1 and 2147483647, got 0");
    CHECK_CONFIG_ERROR(with_queue_lines("    due_since: \"x; DROP TABLE y\"\n"), 7,
                       "queues.q.due_since",
                       "contains ';' (a fragment must be a single expression)");
}

TEST_CASE("claim: redis by default, mysql on request or where redis does not work yet",
          "[config]") {
    const auto plain = parsed(with_queue_lines("")).queues.at(0);
    CHECK(plain.claim == ClaimMode::redis);
    CHECK(plain.key_lines.count("claim") == 0);  // check: "the default"
    const auto asked = parsed(with_queue_lines("    claim: mysql\n")).queues.at(0);
    CHECK(asked.claim == ClaimMode::mysql);
    CHECK(asked.key_lines.count("claim") == 1);  // check: "set in the config"
    // Without the key, a queue that claim: redis cannot serve gets mysql rather than an error.
    const auto two_columns = parsed(with_queue_lines("    order_by: a, b\n")).queues.at(0);
    CHECK(two_columns.claim == ClaimMode::mysql);
    CHECK(
        parsed(with_queue_lines("    claim: redis\n    order_by: id DESC\n")).queues.at(0).claim ==
        ClaimMode::redis);
    CHECK_CONFIG_ERROR(with_queue_lines("    claim: memory\n"), 7, "queues.q.claim",
                       "must be mysql or redis, got 'memory'");
    CHECK_CONFIG_ERROR(with_queue_lines("    order_by: a, b\n    claim: redis\n"), 7,
                       "queues.q.order_by", "with claim: redis, order_by takes one column, got 2");
    CHECK_CONFIG_ERROR(with_queue_lines("    claim: redis\n    shards:\n      - { name: a }\n"), 7,
                       "queues.q.claim", "claim: redis does not work with shards yet; use mysql");
}

TEST_CASE("payload lists columns for the ready message and payload_max bounds it",
          "[config][payload]") {
    auto config = parsed(with_queue_lines("    payload: [url, Owner_id]\n"));
    CHECK(config.queues.at(0).payload == std::vector<std::string>{"url", "Owner_id"});
    CHECK(config.queues.at(0).payload_max == 4096);
    CHECK(parsed(with_queue_lines("    payload_max: 16KiB\n")).queues.at(0).payload_max == 16384);
    CHECK(parsed(with_queue_lines("    payload_max: 300\n")).queues.at(0).payload_max == 300);
    CHECK(parsed(with_queue_lines("    payload_max: 64KiB\n")).queues.at(0).payload_max == 65536);
    CHECK(parsed(with_queue_lines("")).queues.at(0).payload.empty());
    CHECK(parsed(with_queue_lines("    payload: []\n")).queues.at(0).payload.empty());

    CHECK_CONFIG_ERROR(with_queue_lines("    payload: url\n"), 7, "queues.q.payload",
                       "must be a list of column names, got 'url'");
    CHECK_CONFIG_ERROR(with_queue_lines("    payload: [url, \"a`b\"]\n"), 7, "queues.q.payload[1]",
                       "'a`b' is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_$]*, at most "
                       "64 characters)");
    CHECK_CONFIG_ERROR(with_queue_lines("    payload: [a$b]\n"), 7, "queues.q.payload[0]",
                       "'a$b' cannot be a field name ([A-Za-z_][A-Za-z0-9_]*)");
    CHECK_CONFIG_ERROR(with_queue_lines("    payload: [url, URL]\n"), 7, "queues.q.payload[1]",
                       "column 'URL' is listed twice");
    for (const std::string bad : {"100", "255", "65537", "65KiB", "4kb", "-1", "0KiB", "x"}) {
        CHECK_CONFIG_ERROR(
            with_queue_lines("    payload_max: " + bad + "\n"), 7, "queues.q.payload_max",
            "must be a size from 256 to 65536 bytes (e.g. 4096 or 4KiB), got '" + bad + "'");
    }
}
