#pragma once

// What this dispatcher process knows about one queue, for /metrics, /healthz, /readyz and the
// dashboard. The queue's thread writes it with one call per event; the HTTP threads and the
// observer read it. Everything is an atomic: a scrape never waits for the dispatch loop, and
// the loop never waits for a scrape.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rowpump/common/duration.hpp"
#include "rowpump/dispatcher/observe/key_figures.hpp"

namespace rowpump {

struct AppliedCounts;
struct ClaimedRow;

// A Prometheus histogram of durations with fixed bucket bounds, in seconds.
class Histogram {
public:
    explicit Histogram(std::vector<double> bounds);
    void observe(std::chrono::steady_clock::duration d) noexcept;

    struct Snapshot {
        std::vector<double> bounds;
        std::vector<std::uint64_t> counts;  // per bucket (not cumulative); the last one is +Inf
        double sum_seconds = 0;
    };
    Snapshot snapshot() const;

private:
    std::vector<double> bounds_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
    std::atomic<std::int64_t> sum_ns_{0};
};

// Counters of events in this process (Prometheus counters: they start at 0 with the process).
enum class Counter {
    dispatched,
    completed,
    retried,
    dead,
    stale,
    bad,
    reaped,
    claims,
    renewed,  // leases renewed because their task was still held (claim: mysql)
    again,    // outcomes found applied already, counted once (also in completed/retried/dead)
    count_
};
// Values that go up and down.
enum class Gauge {
    ready,              // the ready list's length at the last cycle
    in_flight,          // tasks in workers' processing lists (sampled by the observer)
    workers,            // listed workers (sampled by the observer)
    live_workers,       // listed workers whose heartbeat key exists (sampled by the observer)
    due,                // due backlog (the leader's bounded count)
    due_capped,         // 1 when that count stopped at due_count.cap
    oldest_due_age_ms,  // -1 when unknown
    leader,             // 1 while this process holds the queue's leader lock
    paused,             // 1 while the queue is paused
    mysql_connected,
    redis_connected,
    count_
};
// Errors the queue's loop met, by kind.
enum class ErrorKind { mysql_connection, mysql, redis_connection, redis, count_ };

const char* counter_name(Counter c);
const char* error_kind_name(ErrorKind k);

class QueueMetrics {
public:
    // `loops`: how many loops of this process feed it (one per shard of a queue with shards).
    explicit QueueMetrics(std::string queue, std::int64_t loops = 1);

    const std::string& queue() const { return queue_; }
    std::int64_t loops() const { return loops_; }

    void add(Counter c, std::int64_t n = 1) noexcept;
    void set(Gauge g, std::int64_t value) noexcept;
    void change(Gauge g, std::int64_t delta) noexcept;
    void error(ErrorKind k) noexcept;
    // A batch of outcomes (or of tasks taken back from workers) applied and acknowledged.
    void applied(const AppliedCounts& counts, std::int64_t refused, std::int64_t reaped) noexcept;
    // A claim that took `took`.
    void claimed(std::chrono::steady_clock::duration took) noexcept;
    // A batch of claimed rows pushed to the ready list `since_claim` after the claim began:
    // each row's due-to-start latency (from its due_since at the claim's read, else from the
    // claim), and with group_by the rows of each key (keys()).
    void pushed(const std::vector<ClaimedRow>& rows,
                std::chrono::steady_clock::duration since_claim);
    // How long a handler ran, as its worker reported it (ms= in the done message).
    void handled(Millis took) noexcept;
    // Per-key figures of a queue with group_by.
    KeyFigures& keys() { return keys_; }
    const KeyFigures& keys() const { return keys_; }
    Histogram& claim_duration() { return claim_duration_; }
    Histogram& outcome_batch_duration() { return outcome_batch_duration_; }
    // The loop promises to come back within `within` (a cycle, or a sleep plus slack);
    // /healthz fails for a loop that broke that promise.
    void expect_progress(Millis within) noexcept;

    std::int64_t get(Counter c) const noexcept;
    std::int64_t get(Gauge g) const noexcept;
    std::int64_t errors(ErrorKind k) const noexcept;
    const Histogram& claim_duration() const { return claim_duration_; }
    const Histogram& outcome_batch_duration() const { return outcome_batch_duration_; }
    const Histogram& due_to_start() const { return due_to_start_; }
    const Histogram& handler_duration() const { return handler_duration_; }
    bool stuck(std::chrono::steady_clock::time_point now) const noexcept;
    // The one place that says whether this process leads the queue; the runner feeds it.
    // With shards: whether it leads any of them.
    bool leader() const noexcept { return get(Gauge::leader) > 0; }
    // Every loop connected to `server` (Gauge::mysql_connected or redis_connected).
    bool connected(Gauge server) const noexcept { return get(server) == loops_; }

private:
    std::string queue_;
    std::int64_t loops_;
    std::array<std::atomic<std::int64_t>, static_cast<std::size_t>(Counter::count_)> counters_{};
    std::array<std::atomic<std::int64_t>, static_cast<std::size_t>(Gauge::count_)> gauges_{};
    std::array<std::atomic<std::int64_t>, static_cast<std::size_t>(ErrorKind::count_)> errors_{};
    Histogram claim_duration_;
    Histogram outcome_batch_duration_;
    Histogram due_to_start_;
    Histogram handler_duration_;
    std::atomic<std::int64_t> progress_deadline_ns_;
    KeyFigures keys_;
};

// One loop's part of a gauge that the loops of a queue's shards add up (leader, connected):
// 1 or 0 from each, so the gauge counts the loops for which it holds.
class GaugePart {
public:
    GaugePart(QueueMetrics& metrics, Gauge gauge) : metrics_(metrics), gauge_(gauge) {}
    GaugePart(const GaugePart&) = delete;
    GaugePart& operator=(const GaugePart&) = delete;
    ~GaugePart() { set(false); }

    void set(bool on) noexcept {
        if (on != on_) metrics_.change(gauge_, on ? 1 : -1);
        on_ = on;
    }

private:
    QueueMetrics& metrics_;
    Gauge gauge_;
    bool on_ = false;
};

// Every queue's metrics, in config order; lives as long as the dispatcher.
using MetricsSet = std::vector<std::unique_ptr<QueueMetrics>>;

}  // namespace rowpump
