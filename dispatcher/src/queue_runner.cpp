#include "queue_runner.hpp"

#include <cppconn/exception.h>
#include <spdlog/spdlog.h>

#include <exception>
#include <future>

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
            if (sql_error && !is_lock_conflict(*sql_error)) {
                store_.reset();  // reopened (and the leader lock taken again) by connect()
                outcome_store_.reset();
            } else if (!sql_error) {
                redis_.reset();
            }
            pause = reconnect_.next();
            const bool transient = sql_error ? is_connection_error(*sql_error) || is_lock_conflict(*sql_error)
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
    if (!outcome_store_) outcome_store_ = QueueStore::open(config_, queue_);
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
    DoneBatch done = take_done();
    auto apply = [this, &done] {
        return apply_isolating(*outcome_store_, done.outcomes, done.valid, done.bad, done.first_error);
    };
    // A claim that resumes a sweep reads only rows ahead of all rows in flight, so it can run
    // beside their outcomes. A claim from the start of the order reads the rows in flight too,
    // and would wait for (or deadlock with) the outcome transaction: outcomes go first then.
    AppliedCounts counts;
    std::future<AppliedCounts> applying;  // declared after `done`: joined before it goes
    if (!done.outcomes.empty() && store_->resuming_sweep()) {
        applying = std::async(std::launch::async, [&apply] {
            MysqlThread mysql_thread;
            return apply();
        });
    } else if (!done.outcomes.empty()) {
        counts = apply();
    }

    const auto now = Clock::now();
    std::int64_t rate_left = 0, capacity = 0, claimed = 0;
    std::exception_ptr dispatch_error;
    try {
        if (!reaped_.empty() || now >= next_reap_) reap();
        rate_left = limiter_.available(now);
        capacity = dispatch_capacity(queue_.batch, queue_.max_backlog, redis_->ready_length(), rate_left);
        claimed = capacity > 0 ? dispatch(now, capacity) : 0;
    } catch (...) {
        dispatch_error = std::current_exception();
    }
    // Outcomes committed in MySQL are acknowledged even when the claim side failed.
    if (applying.valid()) counts = applying.get();
    const auto applied = ack_done(done, counts);
    if (dispatch_error) std::rethrow_exception(dispatch_error);

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

QueueRunner::DoneBatch QueueRunner::take_done() {
    DoneBatch batch;
    batch.messages = redis_->peek_done(kDoneBatch);
    const auto& declared = queue_.on_success ? queue_.on_success->placeholders : std::vector<std::string>{};
    for (const auto& message : batch.messages) {
        std::string error;
        auto done = protocol::parse_done(message, error);
        if (done) error = check_values(*done, declared);
        if (error.empty()) {
            batch.outcomes.push_back(std::move(*done));
            batch.valid.push_back(message);
            continue;
        }
        if (batch.bad.empty()) batch.first_error = error + " (message: " + shorten(message) + ")";
        batch.bad.push_back(message);
    }
    return batch;
}

std::int64_t QueueRunner::ack_done(const DoneBatch& done, const AppliedCounts& counts) {
    if (done.messages.empty()) return 0;
    redis_->ack_done(done.messages.size(), done.bad,
                     {{"completed", counts.completed},
                      {"retried", counts.retried},
                      {"dead", counts.dead},
                      {"stale", counts.stale},
                      {"bad", static_cast<std::int64_t>(done.bad.size())}});
    if (!done.bad.empty()) {
        spdlog::warn("queue {}: moved {} refused done messages to rowpump:{{{}}}:bad; first: {}", queue_.name,
                     done.bad.size(), queue_.name, done.first_error);
    }
    if (counts.stale > 0) {
        spdlog::info("queue {}: ignored {} stale outcomes (their claim had expired or was taken back)",
                     queue_.name, counts.stale);
    }
    if (counts.dead > 0) spdlog::warn("queue {}: {} rows are dead (see `rowpump dead`)", queue_.name, counts.dead);
    return static_cast<std::int64_t>(done.messages.size());
}

AppliedCounts QueueRunner::apply_isolating(QueueStore& store, const std::vector<protocol::Done>& outcomes,
                                           const std::vector<std::string>& messages, std::vector<std::string>& bad,
                                           std::string& first_error) {
    if (outcomes.empty()) return {};
    try {
        return store.apply(outcomes);
    } catch (const sql::SQLException& e) {
        if (is_connection_error(e) || !is_data_error(e)) throw;
    }
    AppliedCounts counts;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        try {
            counts += store.apply({outcomes[i]});
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
    const AppliedCounts counts = apply_isolating(*store_, reaped_, messages, bad, first_error);
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
