#include "rowpump/dispatcher/loop/queue_runner.hpp"

#include <cppconn/exception.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <future>

#include "loop/done_entries.hpp"
#include "redis/nudge_listener.hpp"
#include "rowpump/common/log_text.hpp"
#include "rowpump/common/redis/redis.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

namespace {

constexpr std::int64_t kDoneBatch = 1000;  // done messages applied per cycle
// Longest a cycle may take before /healthz calls the loop stuck: above InnoDB's default lock
// wait (50 s), which a cycle may meet a few times before giving up.
constexpr Millis kCycleLimit{120000};

}  // namespace

QueueRunner::QueueRunner(const QueueSource& source, const std::atomic<bool>& stopping,
                         std::mutex& mutex, std::condition_variable& wake, QueueMetrics& metrics,
                         QueueHealth& health, ShardBalance* balance, QueueLinks& links,
                         ClaimPath& path)
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
      links_(links),
      path_(path),
      reaper_(queue_, label_, metrics),
      locked_outcomes_(kLockedRowCheck),
      leadership_(label_, queue_.leader_timeout),
      limiter_(queue_.rate),
      idle_(queue_.poll_min, queue_.poll_max),
      reconnect_(Millis(100), Millis(5000)),
      outage_("queue " + label_, config_.outage_summary_interval),
      balance_(balance) {}

void QueueRunner::run() {
    MysqlThread mysql_thread;
    NudgeListener listener(config_.redis, protocol::keys_for(queue_.name).nudge,
                           [this] { nudged(); });
    spdlog::info("queue {}: started (table {}, batch {}, lease {}, max_backlog {})", label_,
                 queue_.table, queue_.batch, format_duration(queue_.lease), queue_.max_backlog);
    while (!stopping_) sleep_for(step());
    resign();
    spdlog::info("queue {}: stopped", label_);
}

Millis QueueRunner::step() {
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
        path_.on_lead_lost();
    } catch (const sql::SQLException& e) {
        metrics_.error(is_connection_error(e) ? ErrorKind::mysql_connection : ErrorKind::mysql);
        if (!is_lock_conflict(e)) {
            mysql_.reset();  // reopened by connect()
            mysql_connected_.set(false);
            leading_.set(false);
        }
        pause = failed(describe(e), is_connection_error(e) || is_lock_conflict(e));
    } catch (const redis::IoError& e) {
        metrics_.error(ErrorKind::redis_connection);
        drop_redis();
        pause = failed(std::string("Redis: ") + e.what(), true);
    } catch (const redis::Error& e) {  // redis::ReplyError: a command Redis refused
        metrics_.error(ErrorKind::redis);
        drop_redis();
        pause = failed(std::string("Redis: ") + e.what(), false);
    } catch (const std::exception& e) {  // a bug, or a reply or result that made no sense
        metrics_.error(ErrorKind::redis);
        drop_redis();
        pause = failed(std::string("unexpected error: ") + e.what(), false);
    }
    metrics_.expect_progress(pause + kCycleLimit);
    health_.cycle_ended();
    return pause;
}

void QueueRunner::drop_redis() {
    redis_connected_.set(false);
    redis_.reset();
    path_.on_redis_lost();
}

// Logs a failure of the cycle (see OutageLog); returns how long to wait before trying again.
Millis QueueRunner::failed(const std::string& what, bool transient) {
    const Millis pause = reconnect_.next();
    outage_.failed(what, transient, pause);
    health_.set_role(QueueRole::retrying, what);
    return pause;
}

bool QueueRunner::connect() {
    if (!mysql_) mysql_ = links_.open_mysql(path_);
    mysql_connected_.set(true);
    if (!redis_) {
        redis_ = links_.open_redis(leadership_.id());
        redis_->announce();
    }
    redis_connected_.set(true);
    // A busy leader's pushes renew the lock; the lead script runs when none did lately.
    const bool handed_over = Clock::now() < handed_over_until_;
    bool took_free = false;
    std::string epoch;
    if (leadership_.renewal_due() && !handed_over) {
        const auto lead = redis_->lead();
        took_free = lead.took_free;
        epoch = lead.epoch;
        leadership_.update(lead.holder);
    }
    if (balance_ && leadership_.leading()) balance_shards();
    if (balance_ && !leadership_.leading() && !handed_over) redis_->offer_standby();
    leading_.set(leadership_.leading());
    path_.on_lead(*redis_, leadership_.leading(), took_free, epoch);
    return leadership_.leading();
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
    RedisSide::Inbox inbox = redis_->take_done(kDoneBatch);
    std::vector<DoneEntry>& done = inbox.done;
    path_.on_outcomes_taken(done);
    const bool paused = inbox.paused;
    metrics_.set(Gauge::paused, paused ? 1 : 0);
    auto apply = [this, &done] {
        const auto started = Clock::now();
        auto counts = apply_isolating(mysql_->outcomes(), done);
        const auto took = Clock::now() - started;
        metrics_.outcome_batch_duration().observe(took);
        spdlog::debug("queue {}: applied a batch of {} done messages in {} ms", label_, done.size(),
                      std::chrono::duration_cast<Millis>(took).count());
        return counts;
    };
    // A claim that cannot run beside the outcomes (ClaimPath::claims_beside_outcomes) would
    // wait for (or deadlock with) the outcome transaction: outcomes go first then, or, in a
    // cycle a nudge started, last: a producer waits for that claim, and it cannot take the
    // outcomes' rows (the lease of a task whose outcome waits in Redis is kept).
    AppliedCounts counts;
    std::future<AppliedCounts> applying;  // declared after `done`: joined before it goes
    const bool any_outcome = any_accepted(done);
    const bool beside = path_.claims_beside_outcomes();
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
        if (reaper_.due(now)) reaper_.reap(*redis_, mysql_->reaped_outcomes(), path_);
        rate_left = limiter_.available(now);
        if (queue_.rate && rate_left > 0) rate_left = std::min(rate_left, read_window());
        const auto ready = redis_->ready_length();
        metrics_.set(Gauge::ready, ready);
        capacity =
            paused ? 0
                   : dispatch_capacity(queue_.batch, queue_.max_backlog, ready, rate_left, shares_);
        metrics_.add(Counter::renewed, path_.before_claim(*redis_, capacity, reaper_.pending()));
        claimed = capacity > 0 ? dispatch(now, capacity) : 0;
    } catch (...) {
        dispatch_error = std::current_exception();
    }
    // Outcomes committed in MySQL are acknowledged even when the claim side failed.
    if (applying.valid()) counts = applying.get();
    if (outcomes_last) counts = apply();
    counts.stale += std::count_if(done.begin(), done.end(), [](const auto& e) { return e.stale; });
    const auto applied = ack_done(done, counts);
    watch_locked(done);
    if (dispatch_error) std::rethrow_exception(dispatch_error);

    if ((capacity == 0 && rate_left == 0) || window_opens_ > Clock::now()) {
        idle_.reset();  // waiting for the rate: a nudge could not make it claim sooner
        const auto opens = std::max(limiter_.next_available(now), window_opens_);
        return std::max(Millis(1), std::chrono::ceil<Millis>(opens - Clock::now()));
    }
    // A claim that found fewer rows than it could take: a nudge says more have come.
    nudge_wakes_ = !paused && capacity > claimed;
    if (static_cast<std::int64_t>(done.size()) == kDoneBatch || inbox.more ||
        (capacity > 0 && claimed == capacity)) {
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

std::int64_t QueueRunner::dispatch(TimePoint now, std::int64_t capacity) {
    const auto claim_started = Clock::now();
    const auto& claimed = path_.claim(capacity);
    metrics_.claimed(Clock::now() - claim_started);
    if (claimed.empty()) return 0;
    const auto rows = static_cast<std::int64_t>(claimed.size());
    PushWindow window;
    const auto keys = path_.key_rates(claimed);
    try {
        window = redis_->push(claimed, keys);
    } catch (const std::exception& e) {
        // Once sent, the push may have run in Redis with only its reply lost: whether it
        // landed is asked when Redis is reached again (ClaimPath::on_lead), never guessed.
        // Counted against the rate all the same.
        limiter_.record(Clock::now(), rows);
        path_.on_push_unknown();
        spdlog::warn(
            "queue {}: the push of {} rows failed once sent ({}); their claims are kept until "
            "Redis says whether it landed",
            label_, rows, e.what());
        throw;
    }
    window_opens_ = Clock::now() + window.wait;
    if (!window.leader) {
        // This dispatcher stopped (or froze) long enough for another to take over: nothing
        // was pushed, and the claims go back at once.
        const auto released = path_.on_not_pushed();
        spdlog::info("queue {}: the push was refused by the leader lock; released {} claims",
                     label_, released);
        throw LeadershipLost("push refused");
    }
    path_.on_key_windows(window.keys);
    if (!window.pushed) {
        // Another dispatcher pushed since the window was read: these rows wait for the next.
        spdlog::debug("queue {}: the push window or the ready list is full; released {} claims",
                      label_, path_.on_not_pushed());
        return 0;
    }
    path_.on_pushed();
    // The push has completed: the next dispatch cannot reach Redis sooner than the rate allows.
    // (The window in Redis says the same; this copy also holds when Redis loses it.)
    limiter_.record(Clock::now(), rows);
    metrics_.add(Counter::dispatched, rows);
    metrics_.pushed(claimed, Clock::now() - claim_started);
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
                                 {protocol::kStatStale, counts.stale},
                                 {protocol::kStatAgain, counts.again}})) {
        // The new leader reads the same messages: their outcomes are already applied, so
        // there they count as stale.
        throw LeadershipLost("done-list trim refused");
    }
    // Those put back in the done list are finished, handled and counted when applied.
    std::vector<DoneEntry> finished;
    for (const auto& entry : done) {
        if (!entry.locked) finished.push_back(entry);
    }
    const auto locked = static_cast<std::int64_t>(done.size() - finished.size());
    path_.on_outcomes_finished(finished);
    for (const auto& entry : finished) {
        if (entry.done && entry.done->handler_ms) metrics_.handled(*entry.done->handler_ms);
    }
    const auto refused = refusals(done);
    metrics_.applied(counts, static_cast<std::int64_t>(refused.first), 0);
    log_acknowledged(label_, counts, refused, locked, redis_->keys().bad);
    // Outcomes put back are no progress: a cycle that only puts them back sleeps as an idle
    // one, and finds them again then.
    return static_cast<std::int64_t>(done.size()) - locked;
}

void QueueRunner::watch_locked(const std::vector<DoneEntry>& done) {
    const auto now = LockedRowWatch::Clock::now();
    if (!locked_outcomes_.look_due(now)) return;
    auto ids = locked_ids(done);
    const auto reaped = locked_ids(reaper_.pending());
    ids.insert(ids.end(), reaped.begin(), reaped.end());
    const auto report = locked_outcomes_.looked(ids, now);
    constexpr std::size_t kNamed = 10;  // rows named per look; the others are counted
    for (std::size_t i = 0; i < std::min(report.size(), kNamed); ++i) {
        spdlog::warn(
            "queue {}: row {} has been locked by another transaction for {} or more; its "
            "outcome is applied when the lock goes, the other rows' meanwhile",
            label_, log_text(report[i]), format_duration(locked_outcomes_.check_every()));
    }
    if (report.size() > kNamed) {
        spdlog::warn(
            "queue {}: and {} more rows have been locked by another transaction for {} or more",
            label_, report.size() - kNamed, format_duration(locked_outcomes_.check_every()));
    }
}

std::int64_t QueueRunner::read_window() {
    const PushWindow window = redis_->push({}, {});
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
