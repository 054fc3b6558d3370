#pragma once

// What most dispatcher tests start from: a scratch directory, a MariaDB with an empty
// database, a Redis, and helpers to write a config and start `rowpump run`.

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rowpump/testing/eventually.hpp"

#include "rowpump/testing/mysql_client.hpp"
#include "rowpump/testing/rowpump_cli.hpp"
#include "rowpump/testing/rowpump_config.hpp"
#include "rowpump/testing/servers.hpp"
#include "rowpump/testing/temp_dir.hpp"

namespace rowpump::testing {

struct TestBed {
    TestBed() = default;
    explicit TestBed(ServerClock mysql_clock, ServerClock redis_clock = ServerClock::real)
        : mysql(mysql_clock), redis(redis_clock) {}

    TempDir dir{"rowpump-it-"};
    MariaDb mysql;
    RedisServer redis;
    std::string database = mysql.create_database();

    MysqlClient db() const { return mysql.connect(database); }
    redis::Connection redis_client() const { return redis.connect(); }

    ConfigSpec config_spec(std::vector<QueueSpec> queues = {QueueSpec{}}) const {
        return config_for(mysql, redis, database, std::move(queues));
    }
    // Writes <dir>/<name> and returns its path.
    std::string write_config(std::vector<QueueSpec> queues = {QueueSpec{}},
                             const std::string& name = "rowpump.yaml") const {
        return rowpump::testing::write_config(dir.file(name), config_spec(std::move(queues)));
    }
    std::unique_ptr<Dispatcher> start_dispatcher(
        const std::string& config, const std::string& log_name = "dispatcher.log") const {
        return std::make_unique<Dispatcher>(config, dir.file(log_name));
    }
    // A dispatcher that leads (leader.log), then one that stands by (standby.log); throws if
    // either does not say so within 10 s.
    std::pair<std::unique_ptr<Dispatcher>, std::unique_ptr<Dispatcher>> start_leader_and_standby(
        const std::string& config) const {
        auto leader = start_dispatcher(config, "leader.log");
        await_log(*leader, "took the leader lock");
        auto standby = start_dispatcher(config, "standby.log");
        await_log(*standby, "standing by");
        return {std::move(leader), std::move(standby)};
    }

private:
    static void await_log(const Dispatcher& d, const std::string& text) {
        using namespace std::chrono_literals;
        if (!eventually(10s, [&] { return d.log().find(text) != std::string::npos; })) {
            throw std::runtime_error(d.log_path() + " never said '" + text + "'");
        }
    }
};

}  // namespace rowpump::testing
