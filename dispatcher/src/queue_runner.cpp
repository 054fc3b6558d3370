#include "queue_runner.hpp"

#include <cppconn/exception.h>
#include <spdlog/spdlog.h>

#include "rowpump/dispatcher/mysql_session.hpp"

namespace rowpump {

namespace {

constexpr std::int64_t kDoneBatch = 1000;  // done messages applied per cycle
constexpr Millis kStandby{2000};           // how often a stand-by dispatcher asks for the lock

std::string shorten(const std::string& text) {
    return text.size() <= 200 ? text : text.substr(0, 200) + "...";
}

}  // namespace

QueueRunner::QueueRunner(const Config& config, const QueueConfig& queue, const std::atomic<bool>& stopping,
                         std::mutex& mutex, std::condition_variable& wake)
    : config_(config),
      queue_(queue),
      stopping_(stopping),
      mutex_(mutex),
      wake_(wake),
      limiter_(queue.rate),
      idle_(queue.poll_min, queue.poll_max),
      reconnect_(Millis(100), Millis(5000)) {}

void QueueRunner::run() {
    MysqlThread mysql_thread;
    spdlog::info("queue {}: started (table {}, batch {}, lease {}, max_backlog {})", queue_.name, queue_.table,
                 queue_.batch, format_duration(queue_.lease), queue_.max_backlog);
    bool failing = false;  // log the first failure loudly, repeats quietly, recovery once
    while (!stopping_) {
        Millis pause{0};
        try {
            pause = connect() ? cycle() : kStandby;
            if (failing) spdlog::info("queue {}: recovered", queue_.name);
            failing = false;
            reconnect_.reset();
        } catch (const std::exception& e) {
            const auto* sql_error = dynamic_cast<const sql::SQLException*>(&e);
            std::string what = sql_error ? describe(*sql_error) : std::string("Redis: ") + e.what();
            if (sql_error) {
                store_.reset();  // reopened (and the leader lock taken again) by connect()
            } else {
                redis_.reset();
            }
            pause = reconnect_.next();
            const bool transient = sql_error ? is_connection_error(*sql_error)
                                             : dynamic_cast<const redis::IoError*>(&e) != nullptr;
            const auto level = !transient ? spdlog::level::err
                               : failing  ? spdlog::level::debug
                                          : spdlog::level::warn;
            spdlog::log(level, "queue {}: {}; retrying in {}", queue_.name, what, format_duration(pause));
            failing = true;
        }
        sleep_for(pause);
    }
    spdlog::info("queue {}: stopped", queue_.name);
}

bool QueueRunner::connect() {
    if (!store_) {
        store_ = QueueStore::open(config_, queue_);
        leader_ = false;
    }
    if (!redis_) {
        redis_.emplace(RedisQueue::open(config_.redis, queue_));
        redis_->announce();
    }
    if (!leader_) {
        leader_ = store_->try_lead();
        spdlog::log(leader_ ? spdlog::level::info : spdlog::level::debug, "queue {}: {}", queue_.name,
                    leader_ ? "took the leader lock; dispatching"
                            : "another dispatcher holds the leader lock; standing by");
    }
    return leader_;
}

Millis QueueRunner::cycle() {
    const auto applied = apply_done();
    if (!reaped_.empty() || Clock::now() >= next_reap_) reap();

    const auto now = Clock::now();
    const auto rate_left = limiter_.available(now);
    const auto capacity = dispatch_capacity(queue_.batch, queue_.max_backlog, redis_->ready_length(), rate_left);
    const auto claimed = capacity > 0 ? dispatch(now, capacity) : 0;

    if (capacity == 0 && rate_left == 0) {
        idle_.reset();
        return std::max(Millis(1), std::chrono::ceil<Millis>(limiter_.next_available(now) - now));
    }
    if (applied == kDoneBatch || (capacity > 0 && claimed == capacity)) {
        idle_.reset();  // more is waiting
        return Millis(0);
    }
    if (capacity == 0 || claimed > 0 || applied > 0) {
        idle_.reset();  // busy, or waiting for workers to make room
        return queue_.poll_min;
    }
    return idle_.next();
}

std::int64_t QueueRunner::dispatch(TimePoint now, std::int64_t capacity) {
    const Claim claim = store_->claim(capacity);
    if (claim.rows.empty()) return 0;
    std::vector<std::string> messages;
    messages.reserve(claim.rows.size());
    for (const auto& row : claim.rows) messages.push_back(protocol::format_ready(row.id, row.token));
    try {
        redis_->push(messages);
    } catch (const std::exception& push_error) {
        // Counted against the rate all the same: part of the batch may have reached Redis.
        limiter_.record(Clock::now(), static_cast<std::int64_t>(messages.size()));
        try {
            const auto released = store_->release(claim);
            spdlog::warn("queue {}: push failed; released {} claims", queue_.name, released);
        } catch (const sql::SQLException& e) {
            spdlog::warn("queue {}: push failed and releasing the claims failed too ({}); {} rows wait "
                         "for their lease",
                         queue_.name, describe(e), messages.size());
            store_.reset();
        }
        throw;
    }
    // The push has completed: the next dispatch cannot reach Redis sooner than the rate allows.
    limiter_.record(Clock::now(), static_cast<std::int64_t>(messages.size()));
    spdlog::debug("queue {}: dispatched {} rows (capacity {}) in {} ms", queue_.name, messages.size(), capacity,
                  std::chrono::duration_cast<Millis>(Clock::now() - now).count());
    return static_cast<std::int64_t>(messages.size());
}

std::int64_t QueueRunner::apply_done() {
    const auto messages = redis_->peek_done(kDoneBatch);
    if (messages.empty()) return 0;
    const auto& declared = queue_.on_success ? queue_.on_success->placeholders : std::vector<std::string>{};
    std::vector<protocol::Done> valid;
    std::vector<std::string> valid_messages, bad;
    std::string first_error;
    for (const auto& message : messages) {
        std::string error;
        auto done = protocol::parse_done(message, error);
        if (done) error = check_values(*done, declared);
        if (error.empty()) {
            valid.push_back(std::move(*done));
            valid_messages.push_back(message);
            continue;
        }
        if (bad.empty()) first_error = error + " (message: " + shorten(message) + ")";
        bad.push_back(message);
    }
    const auto started = Clock::now();
    const AppliedCounts counts = apply_isolating(valid, valid_messages, bad, first_error);
    spdlog::debug("queue {}: applied {} outcomes in {} ms", queue_.name, valid.size(),
                  std::chrono::duration_cast<Millis>(Clock::now() - started).count());
    redis_->ack_done(messages.size(), bad,
                     {{"completed", counts.completed},
                      {"retried", counts.retried},
                      {"dead", counts.dead},
                      {"stale", counts.stale},
                      {"bad", static_cast<std::int64_t>(bad.size())}});
    if (!bad.empty()) {
        spdlog::warn("queue {}: moved {} refused done messages to rowpump:{{{}}}:bad; first: {}", queue_.name,
                     bad.size(), queue_.name, first_error);
    }
    if (counts.stale > 0) {
        spdlog::info("queue {}: ignored {} stale outcomes (their claim had expired or was taken back)",
                     queue_.name, counts.stale);
    }
    if (counts.dead > 0) spdlog::warn("queue {}: {} rows are dead (see `rowpump dead`)", queue_.name, counts.dead);
    return static_cast<std::int64_t>(messages.size());
}

AppliedCounts QueueRunner::apply_isolating(const std::vector<protocol::Done>& outcomes,
                                           const std::vector<std::string>& messages, std::vector<std::string>& bad,
                                           std::string& first_error) {
    if (outcomes.empty()) return {};
    try {
        return store_->apply(outcomes);
    } catch (const sql::SQLException& e) {
        if (is_connection_error(e) || !is_data_error(e)) throw;
    }
    AppliedCounts counts;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        try {
            counts += store_->apply({outcomes[i]});
        } catch (const sql::SQLException& e) {
            if (is_connection_error(e) || !is_data_error(e)) throw;
            if (bad.empty()) first_error = describe(e) + " (message: " + shorten(messages[i]) + ")";
            bad.push_back(messages[i]);
        }
    }
    return counts;
}

void QueueRunner::reap() {
    next_reap_ = Clock::now() + queue_.reap_interval;
    for (const auto& [worker, messages] : redis_->reap_dead_workers()) {
        std::vector<std::string> bad;
        for (const auto& message : messages) {
            std::string error;
            auto task = protocol::parse_ready(message, error);
            if (!task) {
                bad.push_back(message);
                continue;
            }
            protocol::Done done;
            done.ready = message;
            done.task = std::move(*task);
            done.verb = protocol::Verb::retry;
            done.reason = "worker " + worker + " stopped sending heartbeats";
            done.delay = Millis(0);
            reaped_.push_back(std::move(done));
        }
        spdlog::warn("queue {}: worker {} stopped sending heartbeats; took back {} tasks", queue_.name, worker,
                     messages.size());
        if (!bad.empty()) redis_->move_aside(bad, {{"bad", static_cast<std::int64_t>(bad.size())}});
    }
    apply_reaped();
}

void QueueRunner::apply_reaped() {
    if (reaped_.empty()) return;
    // Kept in memory until applied: a MySQL outage here must not lose them (if this process
    // dies instead, the rows come back when their lease ends).
    std::vector<std::string> messages, bad;
    for (const auto& done : reaped_) messages.push_back(done.ready);
    std::string first_error;
    const AppliedCounts counts = apply_isolating(reaped_, messages, bad, first_error);
    redis_->move_aside(bad, {{"reaped", static_cast<std::int64_t>(reaped_.size())},
                             {"retried", counts.retried},
                             {"dead", counts.dead},
                             {"stale", counts.stale},
                             {"bad", static_cast<std::int64_t>(bad.size())}});
    if (!bad.empty()) {
        spdlog::warn("queue {}: moved {} tasks taken back from workers to rowpump:{{{}}}:bad; first: {}",
                     queue_.name, bad.size(), queue_.name, first_error);
    }
    reaped_.clear();
}

void QueueRunner::sleep_for(Millis pause) {
    if (pause.count() <= 0) return;
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_for(lock, pause, [this] { return stopping_.load(); });
}

}  // namespace rowpump
