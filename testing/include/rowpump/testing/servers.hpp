#pragma once

// Throwaway MariaDB and Redis servers for integration tests: child processes on free
// loopback ports, with data in a fresh directory under /tmp. Each can be stopped, killed
// and started again on the same port with the same data, for restart tests.
// Start, stop and kill them from the test's main thread (see ChildProcess).

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rowpump/common/redis/redis.hpp"
#include "rowpump/testing/mysql_client.hpp"
#include "rowpump/testing/process.hpp"
#include "rowpump/testing/temp_dir.hpp"

namespace rowpump::testing {

// A loopback TCP port nobody listens on right now (bind to port 0, read it, close).
int free_port();

enum class ServerClock { real, stepped };

// The environment that runs a process under libfaketime (Debian's faketime, its build for
// multi-threaded programs) with its wall clock `offset_file` ahead of ours: "+0" at first,
// then what write_clock_offset() puts there. The file is read at every clock reading, so a
// step takes effect at once; the monotonic clock stays real.
std::vector<std::pair<std::string, std::string>> stepped_clock_env(const std::string& offset_file);
// Writes `offset` ("+3600", "-3600") to a stepped_clock_env() file, in one rename.
void write_clock_offset(const std::string& offset_file, std::chrono::seconds offset);

class MariaDb {
public:
    static constexpr const char* kUser = "rowpump";
    static constexpr const char* kPassword = "rowpump-test-pw";

    // Starts the server and creates user kUser with all privileges. Throws with the tail of
    // the server's log when it does not come up. With ServerClock::stepped the server runs
    // under libfaketime (Debian's faketime), its wall clock set_clock_offset() from ours.
    // `extra_args` are more mariadbd options ("--ssl-ca=...", ...).
    explicit MariaDb(ServerClock clock = ServerClock::real,
                     std::vector<std::string> extra_args = {});
    ~MariaDb();
    MariaDb(const MariaDb&) = delete;
    MariaDb& operator=(const MariaDb&) = delete;

    int port() const { return port_; }
    const std::string& dir() const { return dir_.path(); }
    std::string log_path() const { return dir_.file("error.log"); }

    // The server's wall clock (NOW(), UTC_TIMESTAMP(), every session's) from now on runs
    // `offset` ahead of ours (behind when negative): a clock step, as NTP makes one. Its
    // monotonic clock is left alone. Only with ServerClock::stepped.
    void set_clock_offset(std::chrono::seconds offset);

    void start();  // again, on the same port and data; no-op while running
    void stop();   // SIGTERM and wait for a clean shutdown
    void kill();   // SIGKILL and wait: a crash, InnoDB recovers on the next start
    bool running();

    MysqlLogin login(const std::string& database = "") const;  // as kUser
    MysqlClient connect(const std::string& database = "") const;
    MysqlClient connect_root() const;
    // A new, empty database with a name unique on this server.
    std::string create_database();

private:
    void wait_ready();
    void create_user();

    TempDir dir_;
    ServerClock clock_;
    int port_;
    std::vector<std::string> extra_args_;
    int databases_created_ = 0;
    std::unique_ptr<ChildProcess> process_;
};

class RedisServer {
public:
    // Started; no persistence, so a restart starts empty. `extra_args` are more
    // redis-server options ("--cluster-enabled", "yes", ...). With ServerClock::stepped the
    // server's wall clock (key expiry, TIME) runs set_clock_offset() from ours, through a
    // preloaded library of ours (src/wall_clock_shift.cpp; libfaketime cannot start Debian's
    // redis-server).
    explicit RedisServer(std::vector<std::string> extra_args = {})
        : RedisServer(ServerClock::real, std::move(extra_args)) {}
    explicit RedisServer(ServerClock clock, std::vector<std::string> extra_args = {});
    ~RedisServer();
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;

    int port() const { return port_; }
    const std::string& dir() const { return dir_.path(); }
    std::string log_path() const { return dir_.file("redis.log"); }

    void start();
    void stop();
    void kill();
    bool running();
    // The server's wall clock from now on runs `offset` ahead of ours (behind when
    // negative); its monotonic clock is left alone. Only with ServerClock::stepped.
    void set_clock_offset(std::chrono::seconds offset);

    RedisAddress options() const;
    redis::Connection connect() const;

private:
    void wait_ready();

    TempDir dir_;
    ServerClock clock_;
    int port_;
    std::vector<std::string> extra_args_;
    std::unique_ptr<ChildProcess> process_;
};

// The path of `name` in /usr/bin or /usr/local/bin; throws if it is not installed.
std::string find_server_program(const std::string& name);

// A connection to exactly the Redis (or sentinel) on loopback port `port`, without a login.
redis::Connection connect_redis_port(int port,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace rowpump::testing
