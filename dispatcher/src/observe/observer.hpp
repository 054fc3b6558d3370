#pragma once

// The dispatcher's eyes, in a thread of its own with its own connections, so that nothing an
// operator looks at costs the dispatch loop anything:
// - every second (with http configured): each queue's Redis state (ready, in flight,
//   workers, counters, pause, dispatchers), kept with a few minutes of history for the
//   dashboard's charts;
// - every due_count.interval: the leader counts the due backlog (due_count.hpp) and publishes
//   it in rowpump:{q}:gauges for status and for other dispatchers; every dispatcher says in
//   rowpump:{q}:dispatchers whether it leads or stands by; with group_by, the leader publishes
//   its top keys (KeyFigures) in rowpump:{q}:key_gauges; with http, the dead rows are read
//   again when their number may have changed.
// Readers (the HTTP endpoint) get copies; a failing server is logged and retried.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mysql/mysql_servers.hpp"
#include "rowpump/common/protocol/key_gauges.hpp"
#include "rowpump/common/protocol/queue_gauges.hpp"
#include "rowpump/common/protocol/queue_state.hpp"
#include "rowpump/common/redis/redis_connections.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/observe/queue_metrics.hpp"

namespace sql {
class Connection;
}  // namespace sql

namespace rowpump {

struct DeadRow {
    std::string shard;  // empty for a queue without shards
    std::string id;
    std::int64_t attempts = 0;
    std::string error;
    std::string dead_at;
};

// One point of a chart: queue-wide counters at a moment.
struct Sample {
    std::int64_t at_ms = 0;
    std::int64_t dispatched = 0;
    std::int64_t completed = 0;
    std::int64_t due = -1;  // -1: not known
    std::int64_t ready = 0;
    std::int64_t in_flight = 0;
};

struct QueueView {
    std::string name;
    protocol::QueueState redis;
    std::optional<std::string> paused_by;
    std::optional<protocol::QueueGauges> gauges;
    std::vector<protocol::DispatcherEntry> dispatchers;  // fresh ones only
    std::optional<protocol::KeyGauges> key_gauges;       // group_by: the leader's top keys
    protocol::KeyLimits key_limits;                      // the per-key limits, as set (bounded)
    std::vector<DeadRow> dead;                           // newest first, at most kDeadShown
    std::deque<Sample> history;                          // oldest first
    std::int64_t observed_at_ms = 0;
    std::string problem;  // why the last observation failed, "" when it did not
};

class Observer {
public:
    static constexpr std::size_t kDeadShown = 50;
    static constexpr std::size_t kHistory = 600;  // samples: 10 minutes at one a second

    Observer(const Config& config, MetricsSet& metrics);
    ~Observer();
    Observer(const Observer&) = delete;
    Observer& operator=(const Observer&) = delete;

    void start();
    void stop() noexcept;
    // Look again now (after an action changed something).
    void refresh() noexcept;

    std::vector<QueueView> views() const;

private:
    void run();
    // `forced`: an action asked to look again now.
    void round(bool slow, bool forced);
    void sample(std::size_t i, redis::Connection& redis);
    void publish(std::size_t i, redis::Connection& redis);
    void read_dead(std::size_t i, bool forced);

    const Config& config_;
    MetricsSet& metrics_;
    const bool sampling_;  // with http: every second; without: only what status needs
    const std::string id_;
    mutable std::mutex mutex_;
    std::vector<QueueView> views_;
    std::vector<std::int64_t> dead_seen_;  // the dead counter when the dead rows were read
    redis::Connections redis_;             // one per node serving the queues
    MysqlServers mysql_;                   // the config's server and every shard's
    bool failing_ = false;
    std::int64_t rounds_ = 0;
    std::mutex wake_mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    bool refresh_ = false;
    std::thread thread_;
};

}  // namespace rowpump
