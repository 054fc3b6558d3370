#include "rowpump/dispatcher/observe/queue_metrics.hpp"

#include <algorithm>
#include <map>

#include "rowpump/dispatcher/loop/claim.hpp"
#include "rowpump/dispatcher/loop/outcomes.hpp"

namespace rowpump {

namespace {

// Claims and outcome batches take from well under a millisecond to seconds (a lock wait).
const std::vector<double> kDurationBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,  5,     10};

// A row waits from milliseconds (nudged) to hours (a backlog); handlers run as long as they like.
const std::vector<double> kLatencyBounds = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600};

std::int64_t steady_ns(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

template <typename Array, typename Enum>
auto& slot(Array& array, Enum e) {
    return array[static_cast<std::size_t>(e)];
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(new std::atomic<std::uint64_t>[bounds_.size() + 1]) {
    for (std::size_t i = 0; i <= bounds_.size(); ++i) counts_[i] = 0;
}

void Histogram::observe(std::chrono::steady_clock::duration d) noexcept {
    const double seconds = std::chrono::duration<double>(d).count();
    const auto bucket = static_cast<std::size_t>(
        std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin());
    counts_[bucket].fetch_add(1, std::memory_order_relaxed);
    sum_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(),
                      std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
    Snapshot s;
    s.bounds = bounds_;
    s.counts.reserve(bounds_.size() + 1);
    for (std::size_t i = 0; i <= bounds_.size(); ++i)
        s.counts.push_back(counts_[i].load(std::memory_order_relaxed));
    s.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
    return s;
}

const char* counter_name(Counter c) {
    switch (c) {
        case Counter::dispatched:
            return "dispatched";
        case Counter::completed:
            return "completed";
        case Counter::retried:
            return "retried";
        case Counter::dead:
            return "dead";
        case Counter::stale:
            return "stale";
        case Counter::bad:
            return "bad";
        case Counter::reaped:
            return "reaped";
        case Counter::claims:
            return "claims";
        case Counter::renewed:
            return "renewed";
        case Counter::again:
            return "again";
        case Counter::count_:
            break;
    }
    return "";
}

const char* error_kind_name(ErrorKind k) {
    switch (k) {
        case ErrorKind::mysql_connection:
            return "mysql_connection";
        case ErrorKind::mysql:
            return "mysql";
        case ErrorKind::redis_connection:
            return "redis_connection";
        case ErrorKind::redis:
            return "redis";
        case ErrorKind::count_:
            break;
    }
    return "";
}

QueueMetrics::QueueMetrics(std::string queue, std::int64_t loops)
    : queue_(std::move(queue)),
      loops_(loops),
      claim_duration_(kDurationBounds),
      outcome_batch_duration_(kDurationBounds),
      due_to_start_(kLatencyBounds),
      handler_duration_(kLatencyBounds),
      progress_deadline_ns_(steady_ns(std::chrono::steady_clock::now() + Millis(60000))) {
    set(Gauge::oldest_due_age_ms, -1);
}

void QueueMetrics::add(Counter c, std::int64_t n) noexcept {
    slot(counters_, c).fetch_add(n, std::memory_order_relaxed);
}

void QueueMetrics::set(Gauge g, std::int64_t value) noexcept {
    slot(gauges_, g).store(value, std::memory_order_relaxed);
}

void QueueMetrics::change(Gauge g, std::int64_t delta) noexcept {
    slot(gauges_, g).fetch_add(delta, std::memory_order_relaxed);
}

void QueueMetrics::error(ErrorKind k) noexcept {
    slot(errors_, k).fetch_add(1, std::memory_order_relaxed);
}

void QueueMetrics::applied(const AppliedCounts& counts, std::int64_t refused,
                           std::int64_t reaped) noexcept {
    add(Counter::completed, counts.completed);
    add(Counter::retried, counts.retried);
    add(Counter::dead, counts.dead);
    add(Counter::stale, counts.stale);
    add(Counter::again, counts.again);
    add(Counter::bad, refused);
    add(Counter::reaped, reaped);
}

void QueueMetrics::claimed(std::chrono::steady_clock::duration took) noexcept {
    add(Counter::claims);
    claim_duration_.observe(took);
}

void QueueMetrics::pushed(const std::vector<ClaimedRow>& rows,
                          std::chrono::steady_clock::duration since_claim) {
    for (const auto& row : rows) {
        // A due_since in the future (a clock or fragment that disagrees with `due`) counts as 0.
        const auto due_age = std::max(row.due_age.value_or(std::chrono::microseconds(0)),
                                      std::chrono::microseconds(0));
        due_to_start_.observe(row.due_age ? due_age + since_claim : since_claim);
    }
    std::map<KeyFigures::Key, std::int64_t> by_key;
    for (const auto& row : rows) {
        if (row.key) ++by_key[*row.key];
    }
    if (!by_key.empty()) keys_.pushed(by_key);
}

void QueueMetrics::handled(Millis took) noexcept {
    handler_duration_.observe(took);
}

void QueueMetrics::expect_progress(Millis within) noexcept {
    progress_deadline_ns_.store(steady_ns(std::chrono::steady_clock::now() + within),
                                std::memory_order_relaxed);
}

std::int64_t QueueMetrics::get(Counter c) const noexcept {
    return counters_[static_cast<std::size_t>(c)].load(std::memory_order_relaxed);
}

std::int64_t QueueMetrics::get(Gauge g) const noexcept {
    return gauges_[static_cast<std::size_t>(g)].load(std::memory_order_relaxed);
}

std::int64_t QueueMetrics::errors(ErrorKind k) const noexcept {
    return errors_[static_cast<std::size_t>(k)].load(std::memory_order_relaxed);
}

bool QueueMetrics::stuck(std::chrono::steady_clock::time_point now) const noexcept {
    return steady_ns(now) > progress_deadline_ns_.load(std::memory_order_relaxed);
}

}  // namespace rowpump
