#include <cppconn/exception.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <ostream>
#include <thread>

#include "rowpump/common/protocol.hpp"
#include "rowpump/common/redis.hpp"
#include "rowpump/dispatcher/commands.hpp"
#include "rowpump/dispatcher/mysql_session.hpp"
#include "rowpump/dispatcher/queue_sql.hpp"
#include "rowpump/dispatcher/redis_queue.hpp"

namespace rowpump {

namespace {

struct Snapshot {
    std::int64_t due = 0, ready = 0, in_flight = 0, workers = 0;
    std::map<std::string, std::int64_t> stats;
};

Snapshot take_snapshot(sql::Connection& mysql, redis::Connection& redis, const QueueConfig& queue) {
    Snapshot s;
    std::unique_ptr<sql::Statement> stmt(mysql.createStatement());
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery(QueueSql(queue).count_due()));
    if (rs->next()) s.due = rs->getInt64(1);

    const auto keys = protocol::keys_for(queue.name);
    s.ready = redis.command({"LLEN", keys.ready}).integer();
    const auto workers = redis.command({"SMEMBERS", keys.workers}).strings();
    s.workers = static_cast<std::int64_t>(workers.size());
    for (const auto& w : workers) s.in_flight += redis.command({"LLEN", keys.processing(w)}).integer();
    const auto fields = redis.command({"HGETALL", keys.stats}).strings();
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) s.stats[fields[i]] = std::stoll(fields[i + 1]);
    return s;
}

std::string clock_time() {
    std::time_t now = std::time(nullptr);
    char text[16];
    std::strftime(text, sizeof text, "%H:%M:%S", std::localtime(&now));
    return text;
}

void print_header(std::ostream& out) {
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %-20s %9s %8s %9s %7s %12s %10s %9s %8s %6s %6s %5s\n", "time", "queue",
                  "due", "ready", "in_flight", "workers", "dispatched/s", "done/s", "done", "retried", "dead",
                  "stale", "bad");
    out << line;
}

void print_row(std::ostream& out, const std::string& queue, const Snapshot& now, const Snapshot* before,
               double seconds) {
    auto stat = [](const Snapshot& s, const char* name) {
        auto it = s.stats.find(name);
        return it == s.stats.end() ? std::int64_t{0} : it->second;
    };
    auto rate = [&](const char* name) -> std::string {
        if (before == nullptr || seconds <= 0) return "-";
        return std::to_string(static_cast<std::int64_t>(
            static_cast<double>(stat(now, name) - stat(*before, name)) / seconds + 0.5));
    };
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %-20s %9lld %8lld %9lld %7lld %12s %10s %9lld %8lld %6lld %6lld %5lld\n",
                  clock_time().c_str(), queue.c_str(), static_cast<long long>(now.due),
                  static_cast<long long>(now.ready), static_cast<long long>(now.in_flight),
                  static_cast<long long>(now.workers), rate("dispatched").c_str(), rate("completed").c_str(),
                  static_cast<long long>(stat(now, "completed")), static_cast<long long>(stat(now, "retried")),
                  static_cast<long long>(stat(now, "dead")), static_cast<long long>(stat(now, "stale")),
                  static_cast<long long>(stat(now, "bad")));
    out << line << std::flush;
}

}  // namespace

int command_status(const Config& config, Millis watch, int count, std::ostream& out, std::ostream& err) {
    try {
        auto mysql = connect_mysql(config.mysql);
        auto redis = redis::Connection::connect(redis_options(config.redis));
        std::map<std::string, Snapshot> previous;
        auto last = std::chrono::steady_clock::now();
        print_header(out);
        for (int round = 0; watch.count() == 0 ? round < 1 : (count == 0 || round < count); ++round) {
            if (round > 0) std::this_thread::sleep_for(watch);
            const auto now = std::chrono::steady_clock::now();
            const double seconds = std::chrono::duration<double>(now - last).count();
            last = now;
            for (const auto& queue : config.queues) {
                Snapshot snapshot = take_snapshot(*mysql, redis, queue);
                auto it = previous.find(queue.name);
                print_row(out, queue.name, snapshot, it == previous.end() ? nullptr : &it->second, seconds);
                previous[queue.name] = std::move(snapshot);
            }
        }
    } catch (const sql::SQLException& e) {
        err << "mysql: " << describe(e) << "\n";
        return 1;
    } catch (const std::exception& e) {
        err << "redis: " << e.what() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace rowpump
