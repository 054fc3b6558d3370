#include "observe/observer.hpp"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <mysql_connection.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "mysql/due_count.hpp"
#include "observe/queue_redis_view.hpp"
#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

namespace {

using Clock = std::chrono::steady_clock;

constexpr Millis kSampleInterval{1000};
constexpr int kDeadRereadRounds = 12;  // slow rounds between reads of an unchanged dead list

}  // namespace

Observer::Observer(const Config& config, MetricsSet& metrics)
    : config_(config),
      metrics_(metrics),
      sampling_(config.http.has_value()),
      id_(protocol::dispatcher_id()),
      views_(config.queues.size()),
      dead_seen_(config.queues.size(), -1),
      redis_(config.redis) {
    for (std::size_t i = 0; i < views_.size(); ++i) views_[i].name = config.queues[i].name;
}

Observer::~Observer() {
    stop();
}

void Observer::start() {
    thread_ = std::thread([this] { run(); });
}

void Observer::stop() noexcept {
    {
        std::lock_guard<std::mutex> lock(wake_mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Observer::refresh() noexcept {
    {
        std::lock_guard<std::mutex> lock(wake_mutex_);
        refresh_ = true;
    }
    wake_.notify_all();
}

std::vector<QueueView> Observer::views() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return views_;
}

void Observer::run() {
    MysqlThread mysql_thread;
    auto next_slow = Clock::now();
    bool forced = false;
    for (;;) {
        const auto now = Clock::now();
        const bool slow = forced || now >= next_slow;
        if (slow) next_slow = now + config_.due_count.interval;
        round(slow, forced);
        std::unique_lock<std::mutex> lock(wake_mutex_);
        const auto until = sampling_ ? std::min(now + kSampleInterval, next_slow) : next_slow;
        wake_.wait_until(lock, until, [this] { return stopping_ || refresh_; });
        if (stopping_) break;
        forced = refresh_;
        refresh_ = false;
    }
    mysql_.reset();
}

void Observer::round(bool slow, bool forced) {
    std::string problem;
    try {
        for (std::size_t i = 0; i < config_.queues.size(); ++i) {
            auto& redis = redis_.for_key(protocol::keys_for(config_.queues[i].name).prefix);
            if (sampling_) sample(i, redis);
            if (slow) publish(i, redis);
            if (slow && sampling_) read_dead(i, forced);
        }
    } catch (const sql::SQLException& e) {
        mysql_.reset();
        problem = "MySQL: " + describe(e);
    } catch (const std::exception& e) {
        redis_.reset();
        problem = std::string("Redis: ") + e.what();
    }
    if (!problem.empty()) {
        spdlog::log(failing_ ? spdlog::level::debug : spdlog::level::warn,
                    "observer: {}; the numbers shown are not current", problem);
    } else if (failing_) {
        spdlog::info("observer: recovered");
    }
    failing_ = !problem.empty();
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& view : views_) view.problem = problem;
}

void Observer::sample(std::size_t i, redis::Connection& redis) {
    auto read = read_queue_redis_view(redis, config_.queues[i].name);
    const auto now = read.read_at_ms;
    QueueView v;
    v.redis = std::move(read.state);
    v.paused_by = std::move(read.paused_by);
    v.gauges = std::move(read.gauges);
    v.dispatchers = std::move(read.dispatchers);
    v.key_gauges = std::move(read.key_gauges);
    v.key_limits = std::move(read.key_limits);
    auto& m = *metrics_[i];
    m.set(Gauge::in_flight, v.redis.in_flight);
    m.set(Gauge::workers, v.redis.workers);
    m.set(Gauge::live_workers, v.redis.live_workers);
    if (!m.leader() && v.gauges) {  // the leader counts; the others show its count
        m.set(Gauge::due, v.gauges->due);
        m.set(Gauge::due_capped, v.gauges->due_capped ? 1 : 0);
        m.set(Gauge::oldest_due_age_ms,
              v.gauges->oldest_due_age ? v.gauges->oldest_due_age->count() : -1);
        m.keys().show(v.key_gauges);
    }
    Sample point{now,
                 protocol::stat(v.redis.stats, protocol::kStatDispatched),
                 protocol::stat(v.redis.stats, protocol::kStatCompleted),
                 v.gauges ? v.gauges->due : -1,
                 v.redis.ready,
                 v.redis.in_flight};
    std::lock_guard<std::mutex> lock(mutex_);
    auto& view = views_[i];
    v.name = view.name;
    v.dead = std::move(view.dead);
    v.history = std::move(view.history);
    v.history.push_back(point);
    while (v.history.size() > kHistory) v.history.pop_front();
    v.observed_at_ms = now;
    view = std::move(v);
}

void Observer::publish(std::size_t i, redis::Connection& redis) {
    const auto& queue = config_.queues[i];
    const auto keys = protocol::keys_for(queue.name);
    auto& m = *metrics_[i];
    const bool leader = m.leader();
    redis.command(
        {"HSET", keys.dispatchers, id_,
         protocol::format_dispatcher_entry(leader ? protocol::kRoleLeader : protocol::kRoleStandby,
                                           protocol::unix_ms())});
    if (!leader) return;
    for (const auto& d :
         protocol::parse_dispatchers(redis.command({"HGETALL", keys.dispatchers}).strings())) {
        if (protocol::unix_ms() - d.at_ms > protocol::kDispatcherForgotten.count())
            redis.command({"HDEL", keys.dispatchers, d.id});
    }
    // With shards, the leader of any shard counts them all (another dispatcher leading another
    // shard writes the same sum).
    protocol::QueueGauges gauges;
    try {
        gauges = count_due_everywhere(mysql_, config_, queue);
    } catch (const sql::SQLException& e) {
        if (is_connection_error(e)) throw;
        spdlog::warn("queue {}: counting the due rows failed ({}); see due_count in the README",
                     queue.name, describe(e));
        return;
    }
    gauges.leader = id_;
    const auto expire = std::to_string(3 * config_.due_count.interval.count());
    std::vector<std::string> hset{"HSET", keys.gauges};
    for (auto& field : protocol::gauge_fields(gauges)) hset.push_back(std::move(field));
    redis.append({"DEL", keys.gauges});  // a field left over from an older count must go
    redis.append(hset);
    redis.append({"PEXPIRE", keys.gauges, expire});
    std::size_t replies = 3;
    std::optional<protocol::KeyGauges> key_gauges;
    if (!queue.group_by.empty()) {
        key_gauges = m.keys().take_top(protocol::kTopKeys);
        key_gauges->leader = id_;
        key_gauges->at_ms = protocol::unix_ms();
        std::vector<std::string> key_hset{"HSET", keys.key_gauges};
        for (auto& field : protocol::key_gauge_fields(*key_gauges))
            key_hset.push_back(std::move(field));
        redis.append({"DEL", keys.key_gauges});  // keys that left the top must go
        redis.append(key_hset);
        redis.append({"PEXPIRE", keys.key_gauges, expire});
        replies += 3;
    }
    redis.read_replies(replies);
    if (key_gauges) m.keys().show(key_gauges);
    m.set(Gauge::due, gauges.due);
    m.set(Gauge::due_capped, gauges.due_capped ? 1 : 0);
    m.set(Gauge::oldest_due_age_ms, gauges.oldest_due_age ? gauges.oldest_due_age->count() : -1);
    std::lock_guard<std::mutex> lock(mutex_);
    views_[i].gauges = gauges;
    if (key_gauges) views_[i].key_gauges = std::move(key_gauges);
}

void Observer::read_dead(std::size_t i, bool forced) {
    std::int64_t dead_counter = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        dead_counter = protocol::stat(views_[i].redis.stats, protocol::kStatDead);
    }
    ++rounds_;
    if (!forced && dead_counter == dead_seen_[i] && rounds_ % kDeadRereadRounds != 0) return;
    std::vector<DeadRow> rows;
    const auto& queue = config_.queues[i];
    for (const auto& source : queue_sources(config_, queue)) {
        std::unique_ptr<sql::PreparedStatement> stmt(
            mysql_.at(source.config.mysql).prepareStatement(QueueSql(source.queue).list_dead()));
        stmt->setInt(1, static_cast<int>(kDeadShown));
        std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
        const std::string shard = source.queue.shard ? queue.shards[*source.queue.shard].name : "";
        while (rs->next()) {
            rows.push_back({shard, rs->getString(1), rs->getInt64(2),
                            rs->isNull(3) ? std::string() : std::string(rs->getString(3)),
                            rs->getString(4)});
        }
    }
    // Newest first over every shard ('YYYY-MM-DD hh:mm:ss' sorts as text).
    std::stable_sort(rows.begin(), rows.end(),
                     [](const DeadRow& a, const DeadRow& b) { return a.dead_at > b.dead_at; });
    if (rows.size() > kDeadShown) rows.resize(kDeadShown);
    dead_seen_[i] = dead_counter;
    std::lock_guard<std::mutex> lock(mutex_);
    views_[i].dead = std::move(rows);
}

}  // namespace rowpump
