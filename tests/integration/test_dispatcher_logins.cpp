// Credentials a server refuses are fatal at start, with a message naming the server and the
// keys to fix; a server that is away is waited out, and logged as an outage: the first
// failure, a summary every `outage_summary_interval`, the recovery.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/log_lines.hpp"
#include "rowpump/testing/seed.hpp"
#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

// `rowpump run` with `spec`; its exit status within 10 s (nullopt: still running).
std::optional<ExitStatus> run_until_exit(const TestBed& bed, const ConfigSpec& spec,
                                         std::string& log) {
    const std::string config = write_config(bed.dir.file("login.yaml"), spec);
    auto dispatcher = bed.start_dispatcher(config, "login.log");
    auto status = dispatcher->wait(10s);
    log = dispatcher->log();
    return status;
}

// The lines of `log` at warn or error level that are about `queue`.
std::vector<std::string> loud_lines(const std::string& log, const std::string& queue) {
    return log_lines(log, [&](const std::string& level, const std::string& line) {
        return (level == "warning" || level == "error") &&
               line.find("queue " + queue + ":") != std::string::npos;
    });
}

}  // namespace

TEST_CASE("a wrong MySQL password at start ends the dispatcher with exit code 3", "[dispatcher]") {
    TestBed bed;
    ConfigSpec spec = bed.config_spec();
    spec.password = "not-the-password";
    std::string log;
    const auto status = run_until_exit(bed, spec, log);
    INFO(log);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 3");
    CHECK(log.find("MySQL at 127.0.0.1:" + std::to_string(bed.mysql.port()) +
                   " refused the login of user 'rowpump'") != std::string::npos);
    CHECK(log.find("MySQL error 1045") != std::string::npos);
    CHECK(log.find("check mysql.user, mysql.password") != std::string::npos);
}

TEST_CASE("a wrong or missing Redis password at start ends the dispatcher with exit code 3",
          "[dispatcher]") {
    TestBed bed;
    bed.redis_client().command({"CONFIG", "SET", "requirepass", "the-password"});
    ConfigSpec spec = bed.config_spec();
    const std::string where = "Redis at 127.0.0.1:" + std::to_string(bed.redis.port());
    for (const std::string password : {"not-the-password", ""}) {
        INFO("password '" << password << "'");
        spec.redis_password = password;
        std::string log;
        const auto status = run_until_exit(bed, spec, log);
        INFO(log);
        REQUIRE(status);
        CHECK(status->describe() == "exit code 3");
        CHECK(log.find(where + " refused the login: " +
                       (password.empty() ? "NOAUTH" : "WRONGPASS")) != std::string::npos);
        CHECK(log.find("check redis.user and redis.password") != std::string::npos);
    }
}

TEST_CASE("a Redis user named without a password logs in as that user, not as the default",
          "[dispatcher]") {
    TestBed bed;
    bed.redis_client().command(
        {"ACL", "SETUSER", "dispatcher", "on", ">the-password", "~*", "+@all"});
    ConfigSpec spec = bed.config_spec();
    spec.redis_user = "dispatcher";  // and no password: the default user needs none
    std::string log;
    const auto status = run_until_exit(bed, spec, log);
    INFO(log);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 3");
    CHECK(log.find("refused the login: WRONGPASS") != std::string::npos);
}

TEST_CASE("an outage is logged once, then summarised every interval, then its end",
          "[dispatcher]") {
    TestBed bed;
    MysqlClient db = bed.db();
    create_user_block_status(db);
    ConfigSpec spec = bed.config_spec();
    spec.extra_lines = {"outage_summary_interval: 1s"};
    const std::string config = write_config(bed.dir.file("rowpump.yaml"), spec);
    migrate_apply(config);
    auto dispatcher = bed.start_dispatcher(config);
    REQUIRE(eventually(10s, [&] { return dispatcher->log_count("took the leader lock"); }));

    bed.mysql.stop();
    // The retries back off from 100 ms to 5 s: two summaries come within about 4 s.
    REQUIRE(eventually(20s, [&] { return dispatcher->log_count("still failing after") >= 2; }));
    bed.mysql.start();
    REQUIRE(eventually(20s, [&] { return dispatcher->log_count("recovered after") == 1; }));

    const std::vector<std::string> loud = loud_lines(dispatcher->log(), "users");
    INFO(dispatcher->log_tail(80));
    REQUIRE(loud.size() >= 3);
    CHECK(loud[0].find("MySQL error") != std::string::npos);  // the first failure, in full
    CHECK(loud[0].find("still failing") == std::string::npos);
    for (std::size_t i = 1; i < loud.size(); ++i)  // then summaries only
        CHECK(loud[i].find("still failing after") != std::string::npos);
    CHECK(loud.size() <= 6);  // not one line per retry
}
