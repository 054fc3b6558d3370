#include "rowpump/testing/servers.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <thread>
#include <utility>

#include <cppconn/exception.h>

namespace rowpump::testing {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        int err = errno;
        ::close(fd);
        throw std::runtime_error(std::string("bind 127.0.0.1:0: ") + std::strerror(err));
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

namespace {

// Debian's libfaketime (package faketime), the build for multi-threaded programs.
std::string faketime_library() {
    for (const char* path : {"/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                             "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1"}) {
        if (::access(path, R_OK) == 0) return path;
    }
    throw std::runtime_error("not installed: libfaketimeMT.so.1 (Debian package faketime)");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> stepped_clock_env(const std::string& offset_file) {
    if (!fs::exists(offset_file)) write_file(offset_file, "+0\n");
    // libfaketime reads the offset from the file at every clock reading (NO_CACHE), so a step
    // takes effect at once for every thread; timeouts keep the real monotonic clock. A program
    // built with AddressSanitizer (scripts/build.sh --sanitize) refuses to start with a library
    // preloaded before its runtime unless told that this is meant.
    const char* asan = std::getenv("ASAN_OPTIONS");
    std::string asan_options = asan != nullptr && *asan != '\0' ? std::string(asan) + ":" : "";
    asan_options += "verify_asan_link_order=0";
    return {{"LD_PRELOAD", faketime_library()},
            {"FAKETIME_TIMESTAMP_FILE", offset_file},
            {"FAKETIME_NO_CACHE", "1"},
            {"FAKETIME_DONT_FAKE_MONOTONIC", "1"},
            {"ASAN_OPTIONS", asan_options}};
}

void write_clock_offset(const std::string& offset_file, std::chrono::seconds offset) {
    const auto s = offset.count();
    // Renamed into place: libfaketime never reads a half-written file.
    write_file(offset_file + ".new", (s < 0 ? "" : "+") + std::to_string(s) + "\n");
    fs::rename(offset_file + ".new", offset_file);
}

namespace {

std::string find_program(std::initializer_list<const char*> candidates) {
    for (const char* path : candidates) {
        if (::access(path, X_OK) == 0) return path;
    }
    throw std::runtime_error(std::string("not installed: ") + *candidates.begin());
}

// Both the template and every server use this redo log size, so no resize at start-up.
constexpr const char* kRedoLogSize = "--innodb-log-file-size=64M";

// mariadb-install-db takes seconds, and ctest runs every test case in a process of its own:
// one initialized datadir is kept under /tmp for all of them, keyed by the server binary
// and the options, and copied for each server. Servers never run on the template itself.
std::string template_key(const std::string& mariadbd) {
    struct stat st {};
    if (::stat(mariadbd.c_str(), &st) != 0) throw std::runtime_error("stat " + mariadbd);
    return std::to_string(st.st_size) + "-" + std::to_string(st.st_mtime) + "-log64M";
}

std::string build_template(const std::string& target) {
    std::string install =
        find_program({"/usr/bin/mariadb-install-db", "/usr/sbin/mariadb-install-db",
                      "/usr/bin/mysql_install_db"});
    std::string scratch = target + ".tmp-" + std::to_string(::getpid());
    // A tmpdir of its own, as for the servers: the bootstrap server deletes #sql* files there.
    std::string scratch_tmp = scratch + "-tmpdir";
    fs::remove_all(scratch);
    fs::remove_all(scratch_tmp);
    fs::create_directories(scratch_tmp);
    RunResult r = run_program(
        {install, "--no-defaults", "--user=root", "--datadir=" + scratch, "--tmpdir=" + scratch_tmp,
         "--auth-root-authentication-method=normal", "--skip-test-db", kRedoLogSize},
        120s);
    fs::remove_all(scratch_tmp);
    if (!r.status.success()) {
        fs::remove_all(scratch);
        throw std::runtime_error("mariadb-install-db failed: " + r.describe());
    }
    // rename() is atomic: other test processes see no template or a complete one. If one of
    // them won the race, theirs is as good as ours.
    if (::rename(scratch.c_str(), target.c_str()) != 0) fs::remove_all(scratch);
    return target;
}

const std::string& template_datadir(const std::string& mariadbd) {
    static const std::string path = [&] {
        std::string cache = "/tmp/rowpump-test-cache-" + std::to_string(::getuid());
        fs::create_directories(cache);
        std::string target = cache + "/mariadb-datadir-" + template_key(mariadbd);
        return fs::exists(target) ? target : build_template(target);
    }();
    return path;
}

std::string mariadbd_path() {
    return find_program({"/usr/sbin/mariadbd", "/usr/bin/mariadbd", "/usr/sbin/mysqld"});
}

// Stops a server child: `sig`, then wait; SIGKILL if it ignores us.
void stop_child(std::unique_ptr<ChildProcess>& process, int sig, std::chrono::milliseconds grace) {
    if (!process) return;
    process->stop(grace, sig);
    process.reset();
}

}  // namespace

MariaDb::MariaDb(ServerClock clock, std::vector<std::string> extra_args)
    : dir_("rowpump-mariadb-"),
      clock_(clock),
      port_(free_port()),
      extra_args_(std::move(extra_args)) {
    fs::copy(template_datadir(mariadbd_path()), dir_.file("data"), fs::copy_options::recursive);
    if (clock_ == ServerClock::stepped) write_file(dir_.file("clock-offset"), "+0\n");
    // Our own tmpdir: at start-up mariadbd deletes #sql* files in its tmpdir, which in /tmp
    // could belong to another test's server.
    fs::create_directory(dir_.file("tmp"));
    start();
}

MariaDb::~MariaDb() {
    try {
        stop_child(process_, SIGKILL, 10s);  // nothing to keep: no need for a clean shutdown
    } catch (...) {
    }
}

void MariaDb::start() {
    if (process_ && process_->running()) return;
    std::string mariadbd = mariadbd_path();
    SpawnOptions options;
    options.stdout_path = dir_.file("stdout.log");
    if (clock_ == ServerClock::stepped) options.env = stepped_clock_env(dir_.file("clock-offset"));
    std::vector<std::string> argv{mariadbd,
                                  "--no-defaults",
                                  "--user=root",
                                  "--datadir=" + dir_.file("data"),
                                  "--socket=" + dir_.file("sock"),
                                  "--pid-file=" + dir_.file("mariadbd.pid"),
                                  "--log-error=" + log_path(),
                                  "--tmpdir=" + dir_.file("tmp"),
                                  "--port=" + std::to_string(port_),
                                  "--bind-address=127.0.0.1",
                                  "--skip-name-resolve",
                                  "--innodb-buffer-pool-size=256M",
                                  "--innodb-flush-log-at-trx-commit=2",
                                  kRedoLogSize};
    argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
    process_ = std::make_unique<ChildProcess>(argv, options);
    wait_ready();
    create_user();
}

void MariaDb::set_clock_offset(std::chrono::seconds offset) {
    if (clock_ != ServerClock::stepped) {
        throw std::logic_error(
            "MariaDb::set_clock_offset needs a server with ServerClock::stepped");
    }
    write_clock_offset(dir_.file("clock-offset"), offset);
}

void MariaDb::wait_ready() {
    auto deadline = Clock::now() + 30s;
    std::string last_error;
    while (Clock::now() < deadline) {
        if (!process_->running()) {
            throw std::runtime_error("mariadbd exited (" + process_->status()->describe() +
                                     ") during start-up; log:\n" + file_tail(log_path()));
        }
        try {
            connect_root();
            return;
        } catch (const sql::SQLException& e) {
            last_error = e.what();
        }
        std::this_thread::sleep_for(50ms);
    }
    throw std::runtime_error("mariadbd on port " + std::to_string(port_) +
                             " not ready after 30 s (" + last_error + "); log:\n" +
                             file_tail(log_path()));
}

void MariaDb::create_user() {
    MysqlClient root = connect_root();
    for (const char* host : {"127.0.0.1", "localhost"}) {
        std::string account = std::string("'") + kUser + "'@'" + host + "'";
        root.exec("CREATE USER IF NOT EXISTS " + account + " IDENTIFIED BY " +
                  sql_quote(kPassword));
        root.exec("GRANT ALL PRIVILEGES ON *.* TO " + account + " WITH GRANT OPTION");
    }
}

void MariaDb::stop() {
    stop_child(process_, SIGTERM, 60s);
}
void MariaDb::kill() {
    stop_child(process_, SIGKILL, 10s);
}
bool MariaDb::running() {
    return process_ && process_->running();
}

MysqlLogin MariaDb::login(const std::string& database) const {
    return MysqlLogin{"127.0.0.1", port_, kUser, kPassword, database};
}

MysqlClient MariaDb::connect(const std::string& database) const {
    return MysqlClient::connect(login(database));
}

MysqlClient MariaDb::connect_root() const {
    return MysqlClient::connect(MysqlLogin{"127.0.0.1", port_, "root", "", ""});
}

std::string MariaDb::create_database() {
    std::string name = "rp_test_" + std::to_string(++databases_created_);
    connect_root().exec("CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4");
    return name;
}

std::string find_server_program(const std::string& name) {
    for (const std::string dir : {"/usr/bin/", "/usr/local/bin/"}) {
        if (::access((dir + name).c_str(), X_OK) == 0) return dir + name;
    }
    throw std::runtime_error("not installed: " + name);
}

redis::Connection connect_redis_port(int port, std::chrono::milliseconds timeout) {
    RedisAddress login;
    login.connect_timeout = timeout;
    return redis::Connection::open({"127.0.0.1", port}, login, timeout);
}

RedisServer::RedisServer(ServerClock clock, std::vector<std::string> extra_args)
    : dir_("rowpump-redis-"),
      clock_(clock),
      port_(free_port()),
      extra_args_(std::move(extra_args)) {
    if (clock_ == ServerClock::stepped) write_clock_offset(dir_.file("clock-offset"), {});
    start();
}

void RedisServer::set_clock_offset(std::chrono::seconds offset) {
    if (clock_ != ServerClock::stepped) {
        throw std::logic_error(
            "RedisServer::set_clock_offset needs a server with ServerClock::stepped");
    }
    write_clock_offset(dir_.file("clock-offset"), offset);
}

RedisServer::~RedisServer() {
    try {
        stop_child(process_, SIGKILL, 10s);
    } catch (...) {
    }
}

void RedisServer::start() {
    if (process_ && process_->running()) return;
    std::string server = find_program({"/usr/bin/redis-server", "/usr/local/bin/redis-server"});
    SpawnOptions options;
    options.stdout_path = log_path();
    if (clock_ == ServerClock::stepped) {
        // Not libfaketime: it cannot start redis-server (see wall_clock_shift.cpp).
        options.env = {{"LD_PRELOAD", ROWPUMP_WALL_CLOCK_SHIFT},
                       {"ROWPUMP_CLOCK_OFFSET_FILE", dir_.file("clock-offset")}};
    }
    std::vector<std::string> argv{
        server,         "--bind", "127.0.0.1", "--port",   std::to_string(port_), "--save", "",
        "--appendonly", "no",     "--dir",     dir_.path()};
    argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
    process_ = std::make_unique<ChildProcess>(argv, options);
    wait_ready();
}

void RedisServer::wait_ready() {
    auto deadline = Clock::now() + 10s;
    std::string last_error;
    while (Clock::now() < deadline) {
        if (!process_->running()) {
            throw std::runtime_error("redis-server exited (" + process_->status()->describe() +
                                     ") during start-up; log:\n" + file_tail(log_path()));
        }
        try {
            if (connect().command({"PING"}).string() == "PONG") return;
        } catch (const std::exception& e) {
            last_error = e.what();
        }
        std::this_thread::sleep_for(10ms);
    }
    throw std::runtime_error("redis-server on port " + std::to_string(port_) +
                             " not ready after 10 s (" + last_error + "); log:\n" +
                             file_tail(log_path()));
}

void RedisServer::stop() {
    stop_child(process_, SIGTERM, 10s);
}
void RedisServer::kill() {
    stop_child(process_, SIGKILL, 10s);
}
bool RedisServer::running() {
    return process_ && process_->running();
}

RedisAddress RedisServer::options() const {
    RedisAddress o;
    o.port = port_;
    return o;
}

redis::Connection RedisServer::connect() const {
    return redis::Connection::connect(options());
}

}  // namespace rowpump::testing
