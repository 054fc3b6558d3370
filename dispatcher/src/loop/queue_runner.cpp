#include "loop/queue_runner.hpp"

#include <cppconn/exception.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <future>
#include <unordered_set>

#include "redis/nudge_listener.hpp"
#include "rowpump/common/log_text.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

namespace {

constexpr std::int64_t kDoneBatch = 1000;  // done messages applied per cycle
// Longest a cycle may take before /healthz calls the loop stuck: above InnoDB's default lock
// wait (50 s), which a cycle may meet a few times before giving up.
constexpr Millis kCycleLimit{120000};

// How many entries were refused, and the first one's error with its message, for a log line.
std::pair<std::size_t, std::string> refusals(const std::vector<DoneEntry>& entries) {
    std::pair<std::size_t, std::string> out{0, ""};
    for (const auto& entry : entries) {
        if (!entry.set_aside()) continue;
        if (out.first++ == 0)
            out.second = log_text(entry.why_set_aside()) +
                         (entry.accepted() ? ", counted as a failed attempt" : "") +
                         " (message: " + log_text(entry.message) + ")";
    }
    return out;
}

bool any_accepted(const std::vector<DoneEntry>& entries) {
    return std::any_of(entries.begin(), entries.end(),
                       [](const DoneEntry& e) { return e.accepted(); });
}

}  // namespace

QueueRunner::QueueRunner(const QueueSource& source, const std::atomic<bool>& stopping,
                         std::mutex& mutex, std::condition_variable& wake, QueueMetrics& metrics,
                         QueueHealth& health, ShardBalance* balance)
    : config_(source.config),
      queue_(source.queue),
      label_(source.queue.label()),
      shares_(std::max<std::int64_t>(1, static_cast<std::int64_t>(source.queue.shards.size()))),
      stopping_(stopping),
      mutex_(mutex),
      wake_(wake),
      metrics_(metrics),
      health_(health),
      leading_(metrics, Gauge::leader),
      mysql_connected_(metrics, Gauge::mysql_connected),
      redis_connected_(metrics, Gauge::redis_connected),
      leadership_(label_, queue_.leader_timeout),
      limiter_(queue_.rate),
      idle_(queue_.poll_min, queue_.poll_max),
      reconnect_(Millis(100), Millis(5000)),
      outage_("queue " + label_, config_.outage_summary_interval),
      lease_keeper_(queue_),
      balance_(balance) {}

void QueueRunner::run() {
    MysqlThread mysql_thread;
    NudgeListener listener(config_.redis, protocol::keys_for(queue_.name).nudge,
                           [this] { nudged(); });
    spdlog::info("queue {}: started (table {}, batch {}, lease {}, max_backlog {})", label_,
                 queue_.table, queue_.batch, format_duration(queue_.lease), queue_.max_backlog);
    while (!stopping_) {
        Millis pause{0};
        nudge_wakes_ = false;
        metrics_.expect_progress(kCycleLimit);
        health_.cycle_started(Clock::now());
        try {
            // The leader renews its lock at least this often; a stand-by asks this often.
            pause = std::min(connect() ? cycle() : Millis::max(), leadership_.renew_every());
            health_.set_role(leadership_.leading() ? QueueRole::leader : QueueRole::standby);
            outage_.succeeded();
            reconnect_.reset();
        } catch (const LeadershipLost&) {
            leadership_.lost();  // what it had claimed and not pushed was released
            in_flight_.forget();
        } catch (const sql::SQLException& e) {
            metrics_.error(is_connection_error(e) ? ErrorKind::mysql_connection : ErrorKind::mysql);
            if (!is_lock_conflict(e)) {
                store_.reset();  // reopened by connect()
                outcome_store_.reset();
                mysql_connected_.set(false);
                leading_.set(false);
            }
            pause = failed(describe(e), is_connection_error(e) || is_lock_conflict(e));
        } catch (const redis::IoError& e) {
            metrics_.error(ErrorKind::redis_connection);
            redis_connected_.set(false);
            redis_.reset();
            in_flight_.forget();
            pause = failed(std::string("Redis: ") + e.what(), true);
        } catch (const std::exception& e) {  // redis::ReplyError, or a reply that made no sense
            metrics_.error(ErrorKind::redis);
            redis_connected_.set(false);
            redis_.reset();
            in_flight_.forget();
            pause = failed(std::string("Redis: ") + e.what(), false);
        }
        metrics_.expect_progress(pause + kCycleLimit);
        health_.cycle_ended();
        sleep_for(pause);
    }
    resign();
    spdlog::info("queue {}: stopped", label_);
}

// Logs a failure of the cycle (see OutageLog); returns how long to wait before trying again.
Millis QueueRunner::failed(const std::string& what, bool transient) {
    const Millis pause = reconnect_.next();
    outage_.failed(what, transient, pause);
    health_.set_role(QueueRole::retrying, what);
    return pause;
}

bool QueueRunner::connect() {
    if (!store_) store_ = QueueStore::open(config_, queue_);
    if (!outcome_store_) outcome_store_ = QueueStore::open(config_, queue_);
    mysql_connected_.set(true);
    if (!redis_) {
        redis_.emplace(RedisQueue::open(config_.redis, queue_, leadership_.id()));
        redis_->announce();
    }
    redis_connected_.set(true);
    // A busy leader's pushes renew the lock; the lead script runs when none did lately.
    const bool handed_over = Clock::now() < handed_over_until_;
    if (leadership_.renewal_due() && !handed_over) {
        const auto lead = redis_->lead();
        // With claim: redis, a leader that finds its lock free lost it at some point (a
        // freeze, a Redis that lost its data), and another may have pushed meanwhile: it
        // learns what is in flight anew.
        if (lead.took_free) in_flight_.forget();
        leadership_.update(lead.holder);
    }
    if (balance_ && leadership_.leading()) balance_shards();
    if (balance_ && !leadership_.leading() && !handed_over) redis_->offer_standby();
    leading_.set(leadership_.leading());
    if (queue_.claim == ClaimMode::redis) know_in_flight();
    return leadership_.leading();
}

void QueueRunner::know_in_flight() {
    if (!leadership_.leading()) {
        in_flight_.forget();  // learned again from Redis when this dispatcher leads
        return;
    }
    if (in_flight_.known()) return;
    in_flight_.load(redis_->held_all());
    next_audit_ = Clock::now() + lease_keeper_.interval();
    spdlog::info("queue {}: {} tasks in flight", label_, in_flight_.size());
}

void QueueRunner::mark_stale(std::vector<DoneEntry>& done) {
    for (auto& entry : done) {
        if (entry.accepted() && in_flight_.stale(entry.done->task)) entry.stale = true;
    }
}

// Tasks whose outcome was applied (or found applied) leave in_flight_; an extend's task is
// still in hand.
void QueueRunner::finish_in_flight(const std::vector<DoneEntry>& entries) {
    if (queue_.claim != ClaimMode::redis) return;
    for (const auto& entry : entries) {
        if (entry.accepted() && entry.done->verb != Verb::extend)
            in_flight_.finished(entry.done->task);
    }
}

void QueueRunner::audit_in_flight() {
    const auto now = Clock::now();
    if (now < next_audit_ || in_flight_.size() == 0) return;
    // As often as the keeper looks at leases in mysql mode: a task no list holds any more
    // (Redis lost its data) makes its row wait about as long in either mode.
    next_audit_ = now + lease_keeper_.interval();
    std::vector<Task> reaped;
    for (const auto& entry : reaped_) {
        if (entry.done) reaped.push_back(entry.done->task);
    }
    const auto dropped = in_flight_.keep_only(redis_->held(in_flight_.messages()), reaped);
    if (dropped > 0) {
        spdlog::warn(
            "queue {}: {} tasks in flight are in no Redis list any more (Redis lost data, or "
            "their messages were set aside); their rows are claimable again",
            label_, dropped);
    }
}

// On a clean stop, so that a stand-by need not wait for the lock to expire.
void QueueRunner::resign() {
    if (!redis_ || !leadership_.leading()) return;
    try {
        redis_->resign();
    } catch (const std::exception& e) {
        spdlog::warn(
            "queue {}: could not give up the leader lock ({}); a stand-by takes over "
            "when it expires",
            label_, e.what());
    }
}

void QueueRunner::balance_shards() {
    const auto now = Clock::now();
    if (now < next_balance_) return;
    next_balance_ = now + queue_.leader_timeout;
    const auto view = redis_->shard_leaders();
    if (!should_hand_over(view.leaders, leadership_.id(), view.standby) ||
        !balance_->try_hand_over(now)) {
        return;
    }
    redis_->resign();
    leadership_.handed_over(view.standby);
    handed_over_until_ = now + balance_->pause();
}

Millis QueueRunner::cycle() {
    // Paused (rowpump pause, the dashboard): apply outcomes and take back tasks, claim nothing.
    RedisQueue::Inbox inbox = redis_->take_done(kDoneBatch);
    std::vector<DoneEntry>& done = inbox.done;
    if (queue_.claim == ClaimMode::redis) mark_stale(done);
    const bool paused = inbox.paused;
    metrics_.set(Gauge::paused, paused ? 1 : 0);
    auto apply = [this, &done] {
        const auto started = Clock::now();
        auto counts = apply_isolating(*outcome_store_, done);
        const auto took = Clock::now() - started;
        metrics_.outcome_batch_duration().observe(took);
        spdlog::debug("queue {}: applied a batch of {} done messages in {} ms", label_, done.size(),
                      std::chrono::duration_cast<Millis>(took).count());
        return counts;
    };
    // A claim that resumes a sweep reads only rows ahead of all rows in flight, so it can run
    // beside their outcomes. A claim from the start of the order reads the rows in flight too,
    // and would wait for (or deadlock with) the outcome transaction: outcomes go first then,
    // or, in a cycle a nudge started, last: a producer waits for that claim, and it cannot take
    // the outcomes' rows (the lease of a task whose outcome waits in Redis is kept). With
    // claim: redis the claim is a read that never waits, and the rows are in flight.
    AppliedCounts counts;
    std::future<AppliedCounts> applying;  // declared after `done`: joined before it goes
    const bool any_outcome = any_accepted(done);
    const bool beside = store_->resuming_sweep() || queue_.claim == ClaimMode::redis;
    const bool outcomes_last = any_outcome && nudged_cycle_ && !beside;
    if (any_outcome && beside) {
        applying = std::async(std::launch::async, [&apply] {
            MysqlThread mysql_thread;
            return apply();
        });
    } else if (any_outcome && !outcomes_last) {
        counts = apply();
    }

    const auto now = Clock::now();
    std::int64_t rate_left = 0, capacity = 0, claimed = 0;
    std::exception_ptr dispatch_error;
    try {
        if (!reaped_.empty() || now >= next_reap_) reap();
        rate_left = limiter_.available(now);
        if (queue_.rate && rate_left > 0) rate_left = std::min(rate_left, read_window());
        const auto ready = redis_->ready_length();
        metrics_.set(Gauge::ready, ready);
        capacity =
            paused ? 0
                   : dispatch_capacity(queue_.batch, queue_.max_backlog, ready, rate_left, shares_);
        if (queue_.claim == ClaimMode::redis) {
            audit_in_flight();
        } else if (capacity > 0) {
            lease_keeper_.keep(*store_, *redis_);
        }
        claimed = capacity > 0 ? dispatch(now, capacity) : 0;
    } catch (...) {
        dispatch_error = std::current_exception();
    }
    // Outcomes committed in MySQL are acknowledged even when the claim side failed.
    if (applying.valid()) counts = applying.get();
    if (outcomes_last) counts = apply();
    counts.stale += std::count_if(done.begin(), done.end(), [](const auto& e) { return e.stale; });
    const auto applied = ack_done(done, counts);
    if (dispatch_error) std::rethrow_exception(dispatch_error);

    if ((capacity == 0 && rate_left == 0) || window_opens_ > Clock::now()) {
        idle_.reset();  // waiting for the rate: a nudge could not make it claim sooner
        const auto opens = std::max(limiter_.next_available(now), window_opens_);
        return std::max(Millis(1), std::chrono::ceil<Millis>(opens - Clock::now()));
    }
    // A claim that found fewer rows than it could take: a nudge says more have come.
    nudge_wakes_ = !paused && capacity > claimed;
    if (applied == kDoneBatch || inbox.more || (capacity > 0 && claimed == capacity)) {
        idle_.reset();  // more is waiting
        return Millis(0);
    }
    if (paused && applied == 0) return idle_.next();
    if (capacity == 0 || claimed > 0 || applied > 0) {
        idle_.reset();  // busy, or waiting for workers to make room
        return queue_.poll_min;
    }
    return idle_.next();
}

std::vector<ClaimedRow> QueueRunner::scan_claimable(std::int64_t capacity) {
    const auto wanted = static_cast<std::size_t>(capacity);
    // Rows whose retry delay passed first: behind the scan, they would wait for a sweep.
    std::vector<ClaimedRow> rows = store_->scan_retried(capacity, in_flight_);
    std::unordered_set<std::string> taken;  // a row the scan meets again is pushed once
    for (const auto& row : rows) taken.insert(row.id);
    bool swept = false;
    while (rows.size() < wanted) {
        if (store_->sweeping_from_start() && !swept) {
            swept = true;
            next_sweep_ = Clock::now() + queue_.poll_max;
        }
        const auto want = static_cast<std::int64_t>(wanted - rows.size());
        // A sweep from the start meets the rows in flight first: it reads larger pages.
        const auto read =
            store_->sweeping_from_start() ? std::max<std::int64_t>(want, queue_.batch) : want;
        auto page = store_->scan(want, read, in_flight_);
        for (auto& row : page.rows) {
            if (taken.insert(row.id).second) rows.push_back(std::move(row));
        }
        if (!page.ended) continue;
        // Rows behind the scan that came due (revived, unlocked, made due by the application)
        // are found by a sweep from the start, which reads every row in flight: at most one
        // per poll.max.
        if (swept || Clock::now() < next_sweep_) break;
        store_->rescan_from_start();
    }
    return rows;
}

std::int64_t QueueRunner::dispatch(TimePoint now, std::int64_t capacity) {
    const bool in_redis = queue_.claim == ClaimMode::redis;
    const auto claim_started = Clock::now();
    Claim claim;
    if (in_redis) {
        claim.rows = scan_claimable(capacity);
    } else {
        claim = store_->claim(capacity);
    }
    metrics_.claimed(Clock::now() - claim_started);
    if (claim.rows.empty()) return 0;
    // With claim: redis nothing was written: there is nothing to release, and a push that
    // failed half-way is found out by learning what is in flight again.
    const auto release = [&] { return in_redis ? 0 : store_->release(claim); };
    const auto rows = static_cast<std::int64_t>(claim.rows.size());
    PushWindow window;
    try {
        window = redis_->push(claim.rows);
    } catch (const std::exception& push_error) {
        // Counted against the rate all the same: part of the batch may have reached Redis.
        limiter_.record(Clock::now(), rows);
        in_flight_.forget();
        try {
            const auto released = release();
            spdlog::warn("queue {}: push failed; released {} claims", label_, released);
        } catch (const sql::SQLException& e) {
            spdlog::warn(
                "queue {}: push failed and releasing the claims failed too ({}); {} rows wait "
                "for their lease",
                label_, describe(e), rows);
            store_.reset();
        }
        throw;
    }
    window_opens_ = Clock::now() + window.wait;
    if (!window.leader) {
        // This dispatcher stopped (or froze) long enough for another to take over: nothing
        // was pushed, and the claims go back at once.
        const auto released = release();
        spdlog::info("queue {}: the push was refused by the leader lock; released {} claims",
                     label_, released);
        throw LeadershipLost("push refused");
    }
    if (!window.pushed) {
        // Another dispatcher pushed since the window was read: these rows wait for the next.
        spdlog::debug("queue {}: the push window or the ready list is full; released {} claims",
                      label_, release());
        return 0;
    }
    if (in_redis) in_flight_.add(claim.rows);
    // The push has completed: the next dispatch cannot reach Redis sooner than the rate allows.
    // (The window in Redis says the same; this copy also holds when Redis loses it.)
    limiter_.record(Clock::now(), rows);
    metrics_.add(Counter::dispatched, rows);
    leadership_.renewed();
    health_.add_dispatched(rows);
    spdlog::debug("queue {}: dispatched {} rows (capacity {}) in {} ms", label_, rows, capacity,
                  std::chrono::duration_cast<Millis>(Clock::now() - now).count());
    return rows;
}

std::int64_t QueueRunner::ack_done(const std::vector<DoneEntry>& done,
                                   const AppliedCounts& counts) {
    if (done.empty()) return 0;
    if (!redis_->ack_done(done, {{protocol::kStatCompleted, counts.completed},
                                 {protocol::kStatRetried, counts.retried},
                                 {protocol::kStatDead, counts.dead},
                                 {protocol::kStatStale, counts.stale}})) {
        // The new leader reads the same messages: their outcomes are already applied, so
        // there they count as stale.
        throw LeadershipLost("done-list trim refused");
    }
    finish_in_flight(done);
    const auto [refused, first] = refusals(done);
    metrics_.applied(counts, static_cast<std::int64_t>(refused), 0);
    if (refused > 0) {
        spdlog::warn("queue {}: moved {} refused done messages to {}; first: {}", label_, refused,
                     redis_->keys().bad, first);
    }
    if (counts.again > 0) {
        spdlog::info(
            "queue {}: {} outcomes had been applied already (a dispatcher stopped before "
            "acknowledging them); counted once",
            label_, counts.again);
    }
    if (counts.stale > 0) {
        spdlog::info(
            "queue {}: ignored {} stale outcomes (their claim had expired or was taken back)",
            label_, counts.stale);
    }
    if (counts.dead > 0)
        spdlog::warn("queue {}: {} rows are dead (see `rowpump dead`)", label_, counts.dead);
    return static_cast<std::int64_t>(done.size());
}

AppliedCounts QueueRunner::apply_isolating(QueueStore& store, std::vector<DoneEntry>& entries) {
    std::vector<protocol::Done> outcomes;
    outcomes.reserve(entries.size());
    for (const auto& entry : entries) {
        if (entry.accepted()) outcomes.push_back(*entry.done);
    }
    if (outcomes.empty()) return {};
    try {
        return store.apply(outcomes);
    } catch (const sql::SQLException& e) {
        if (!is_row_error(e)) throw;
    }
    AppliedCounts counts;
    for (auto& entry : entries) {
        if (!entry.accepted()) continue;
        try {
            counts += store.apply({*entry.done});
        } catch (const sql::SQLException& e) {
            if (!is_row_error(e)) throw;
            entry.error = describe(e);
        }
    }
    return counts;
}

void QueueRunner::reap() {
    next_reap_ = Clock::now() + queue_.reap_interval;
    for (auto& worker : redis_->reap_dead_workers()) {
        if (worker.reported > 0) {  // with shards: reported as retries, applied by each shard
            metrics_.add(Counter::reaped, static_cast<std::int64_t>(worker.reported));
            spdlog::warn(
                "queue {}: worker {} stopped sending heartbeats; took back {} tasks and reported "
                "them as retries",
                label_, log_text(worker.worker_id), worker.reported);
            continue;
        }
        for (auto& task : worker.tasks) {
            DoneEntry entry;
            entry.message = task.message;
            entry.done.emplace();
            entry.done->task = std::move(task);
            entry.done->verb = Verb::retry;
            entry.done->reason = "worker " + worker.worker_id + " stopped sending heartbeats";
            entry.done->delay = Millis(0);
            reaped_.push_back(std::move(entry));
        }
        spdlog::warn("queue {}: worker {} stopped sending heartbeats; took back {} tasks", label_,
                     log_text(worker.worker_id), worker.tasks.size() + worker.malformed);
    }
    apply_reaped();
}

void QueueRunner::apply_reaped() {
    if (reaped_.empty()) return;
    // Kept in memory until applied: a MySQL outage here must not lose them (if this process
    // dies instead, the rows come back when their lease ends).
    const AppliedCounts counts = apply_isolating(*store_, reaped_);
    redis_->move_aside(reaped_, {{protocol::kStatReaped, static_cast<std::int64_t>(reaped_.size())},
                                 {protocol::kStatRetried, counts.retried},
                                 {protocol::kStatDead, counts.dead},
                                 {protocol::kStatStale, counts.stale}});
    finish_in_flight(reaped_);
    const auto [refused, first] = refusals(reaped_);
    metrics_.applied(counts, static_cast<std::int64_t>(refused),
                     static_cast<std::int64_t>(reaped_.size()));
    if (refused > 0) {
        spdlog::warn("queue {}: moved {} tasks taken back from workers to {}; first: {}", label_,
                     refused, redis_->keys().bad, first);
    }
    reaped_.clear();
}

std::int64_t QueueRunner::read_window() {
    const PushWindow window = redis_->push({});
    if (!window.leader) throw LeadershipLost("window read refused");
    window_opens_ = Clock::now() + window.wait;
    return window.rows_left;
}

void QueueRunner::sleep_for(Millis pause) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (pause.count() > 0) {
        // A nudge that came during the cycle ends the sleep at once: the claim may have run
        // before the producer's row was committed.
        wake_.wait_for(lock, pause,
                       [this] { return stopping_.load() || (nudge_wakes_ && nudged_); });
    }
    nudged_cycle_ = pause.count() > 0 && nudge_wakes_ && nudged_;
    nudged_ = false;  // any number of nudges before a claim are answered by that claim
}

void QueueRunner::nudged() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        nudged_ = true;
    }
    wake_.notify_all();
}

}  // namespace rowpump
