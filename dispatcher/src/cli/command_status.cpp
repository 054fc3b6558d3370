#include <cppconn/exception.h>
#include <mysql_connection.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <ostream>
#include <thread>

#include "observe/key_view.hpp"
#include "observe/queue_status.hpp"
#include "observe/worker_list.hpp"
#include "rowpump/common/log_text.hpp"
#include "rowpump/common/redis/redis_connections.hpp"
#include "rowpump/dispatcher/cli/commands.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

namespace {

using nlohmann::json;

std::string clock_time(const char* format) {
    std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, format, std::localtime(&now));
    return text;
}

// Per-second rates of two counters between two looks; nullopt on the first look.
struct Rates {
    std::optional<double> dispatched, done;
};

Rates rates(const QueueStatus& now, const QueueStatus* before, double seconds) {
    if (before == nullptr || seconds <= 0) return {};
    auto rate = [&](const char* name) {
        return static_cast<double>(protocol::stat(now.redis.stats, name) -
                                   protocol::stat(before->redis.stats, name)) /
               seconds;
    };
    return {rate(protocol::kStatDispatched), rate(protocol::kStatCompleted)};
}

std::string due_text(const QueueStatus& s) {
    if (!s.gauges) return "?";
    return (s.gauges->due_capped ? ">" : "") + std::to_string(s.gauges->due);
}

std::string age_text(const QueueStatus& s) {
    if (!s.gauges || !s.gauges->oldest_due_age) return "-";
    return format_duration(Millis(s.gauges->oldest_due_age->count() / 1000 * 1000));
}

void print_header(std::ostream& out) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "%-8s %-20s %9s %8s %9s %7s %12s %10s %9s %8s %6s %6s %5s %8s %s\n", "time",
                  "queue", "due", "ready", "in_flight", "workers", "dispatched/s", "done/s", "done",
                  "retried", "dead", "stale", "bad", "oldest", "leader");
    out << line;
}

void print_row(std::ostream& out, const QueueStatus& s, const Rates& r) {
    using namespace protocol;
    auto stat = [&](const char* name) {
        return static_cast<long long>(protocol::stat(s.redis.stats, name));
    };
    auto rate = [](const std::optional<double>& v) {
        return v ? std::to_string(static_cast<std::int64_t>(*v + 0.5)) : std::string("-");
    };
    // The leader id is read from Redis: escaped, so it cannot steer the terminal.
    const std::string leader =
        (s.leader.empty() ? "-" : log_text(s.leader)) + (s.paused_by ? " (paused)" : "");
    char line[512];
    std::snprintf(
        line, sizeof line,
        "%-8s %-20s %9s %8lld %9lld %7lld %12s %10s %9lld %8lld %6lld %6lld %5lld %8s %s\n",
        clock_time("%H:%M:%S").c_str(), s.queue.c_str(), due_text(s).c_str(),
        static_cast<long long>(s.redis.ready), static_cast<long long>(s.redis.in_flight),
        static_cast<long long>(s.redis.workers), rate(r.dispatched).c_str(), rate(r.done).c_str(),
        stat(kStatCompleted), stat(kStatRetried), stat(kStatDead), stat(kStatStale), stat(kStatBad),
        age_text(s).c_str(), leader.c_str());
    out << line << std::flush;
}

// One JSON object per queue and look, on one line (docs/operations.md, "rowpump status --json").
void print_json(std::ostream& out, const QueueStatus& s, const Rates& r) {
    auto optional = [](const auto& v) { return v ? json(*v) : json(nullptr); };
    json counters = json::object();
    for (const char* name :
         {protocol::kStatDispatched, protocol::kStatCompleted, protocol::kStatRetried,
          protocol::kStatDead, protocol::kStatStale, protocol::kStatBad, protocol::kStatReaped,
          protocol::kStatRenewed, protocol::kStatAgain})
        counters[name] = protocol::stat(s.redis.stats, name);
    json o = {{"time", clock_time("%Y-%m-%dT%H:%M:%S%z")},
              {"queue", s.queue},
              {"due", s.gauges ? json(s.gauges->due) : json(nullptr)},
              {"due_capped", s.gauges && s.gauges->due_capped},
              {"due_counted_by", s.counted_here ? json("status") : json(s.gauges->leader)},
              {"oldest_due_age_seconds", nullptr},
              {"ready", s.redis.ready},
              {"in_flight", s.redis.in_flight},
              {"workers", s.redis.workers},
              {"live_workers", s.redis.live_workers},
              {"worker_list", worker_list_json(s.redis)},
              {"dispatched_per_second", optional(r.dispatched)},
              {"done_per_second", optional(r.done)},
              {"counters", counters},
              {"leader", s.leader.empty() ? json(nullptr) : json(s.leader)},
              {"standby", s.standby},
              {"paused", s.paused_by.has_value()},
              {"keys", key_gauges_json(s.key_gauges)},
              {"key_limits", key_limits_json(s.key_limits)}};
    if (s.gauges && s.gauges->oldest_due_age)
        o["oldest_due_age_seconds"] =
            static_cast<double>(s.gauges->oldest_due_age->count()) / 1000.0;
    out << o.dump(-1, ' ', false, json::error_handler_t::replace) << "\n" << std::flush;
}

}  // namespace

int command_status(const Config& config, Millis watch, int count, bool as_json, std::ostream& out,
                   std::ostream& err) {
    try {
        MysqlServers mysql;
        mysql.at(config.mysql);  // an unreachable server is an error up front
        redis::Connections redis(config.redis);
        QueueStatusReader reader(config, mysql, redis);
        std::map<std::string, QueueStatus> previous;
        auto last = std::chrono::steady_clock::now();
        if (!as_json) print_header(out);
        for (int round = 0; watch.count() == 0 ? round < 1 : (count == 0 || round < count);
             ++round) {
            if (round > 0) std::this_thread::sleep_for(watch);
            const auto now = std::chrono::steady_clock::now();
            const double seconds = std::chrono::duration<double>(now - last).count();
            last = now;
            for (const auto& queue : config.queues) {
                QueueStatus status = reader.read(queue);
                auto it = previous.find(queue.name);
                const Rates r =
                    rates(status, it == previous.end() ? nullptr : &it->second, seconds);
                as_json ? print_json(out, status, r) : print_row(out, status, r);
                // One look: each queue's workers under its line (watching keeps a line a queue).
                if (!as_json && watch.count() == 0) {
                    print_worker_list(out, status.redis);
                    print_key_gauges(out, status.key_gauges);
                    print_key_limits(out, status.key_limits);
                }
                previous[queue.name] = std::move(status);
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
