#include "membership.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include "rowpump/common/log_text.hpp"
#include "rowpump/common/protocol/messages.hpp"

#include "rowpump/common/protocol/queue_meta.hpp"
#include "rowpump/common/protocol/scripts.hpp"
#include "rowpump/common/protocol/worker_info.hpp"
#include "rowpump/common/redis/redis_route.hpp"

namespace rowpump::details {

namespace {

constexpr milliseconds kQueuePoll{200};
// How often a starting worker looks at a heartbeat another incarnation holds.
constexpr milliseconds kTakeOverPoll{100};

std::string new_incarnation() {
    std::random_device device;
    std::uniform_int_distribution<unsigned long long> digits;
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", digits(device));
    return text;
}

}  // namespace

Membership::Membership(const WorkerOptions& options, const WorkerKeys& keys,
                       DeclaredValues& declared, const Reporter& reporter, WorkerLog& log,
                       std::atomic<bool>& stop)
    : options_(options),
      keys_(keys),
      declared_(declared),
      reporter_(reporter),
      log_(log),
      stop_(stop) {}

bool Membership::join(bool survive_outages) {
    if (joined_.load(std::memory_order_acquire) && pid_ == getpid()) return true;
    std::lock_guard<std::mutex> lock(mutex_);
    if (joined_.load(std::memory_order_relaxed)) {
        if (pid_ == getpid()) return true;
        // A child after fork(): the heartbeat thread is the parent's (it does not exist
        // here, so it is neither joined nor destroyed) and so is the incarnation.
        static_cast<void>(heartbeat_.release());
        joined_.store(false);
    }
    {
        const auto why = superseded();
        if (!why.empty()) throw Error(why);
    }
    incarnation_ = new_incarnation();
    pid_ = getpid();
    const auto deadline = Clock::now() + options_.queue_wait;
    Session s(options_.redis, options_.queue);
    auto backoff = redis_backoff();
    for (;;) {
        try {
            if (!wait_for_queue(s, deadline, survive_outages)) return false;
            // Every script a worker runs, so that none costs a NOSCRIPT round trip later (the
            // leave script at stop, the give-back after a failover).
            s.load({&protocol::kCompleteScript, &protocol::kTakeScript, &protocol::kLeaveScript,
                    &protocol::kGiveBackScript, &protocol::kBeatScript});
            // The first beat precedes the first BLMOVE, so the dispatcher never sees tasks
            // in our processing list without a heartbeat.
            if (auto other = beat(s, true)) {
                if (!take_over(s, std::move(*other))) return false;
            }
            break;
        } catch (const redis::IoError& e) {
            if (!survive_outages) throw ConnectionError(e.what());
            log_.redis_failed(e);
        } catch (const redis::ReplyError& e) {
            // At start-up an error reply is a configuration problem (wrong password, a key
            // of the wrong type), except while Redis loads its data after a restart.
            if (!survive_outages || std::string_view(e.what()).rfind("LOADING", 0) != 0) {
                throw Error("redis " + redis::describe(options_.redis) + ": " + e.what());
            }
            log_.redis_failed(e);
        }
        sleep_unless(backoff.next(), stop_);
        if (stop_.load()) return false;
    }
    heartbeat_ = std::make_unique<Heartbeat>(
        Session(options_.redis, options_.queue), options_.heartbeat_interval,
        [this](Session& hs) { keep_beating(hs); },
        [this](const std::exception& e) { log_.redis_failed(e); });
    joined_.store(true, std::memory_order_release);
    return true;
}

bool Membership::wait_for_queue(Session& s, Clock::time_point deadline, bool stoppable) {
    for (;;) {
        auto replies = s.pipeline({{"EXISTS", keys_.queue.meta},
                                   {"HGET", keys_.queue.meta, protocol::kMetaValues},
                                   {"HGET", keys_.queue.meta, protocol::kMetaProtocol}});
        if (replies[0].integer() == 1) {
            // Before anything is taken: a dispatcher of another protocol version may read
            // our reports differently (docs/protocol.md, "Protocol version").
            const auto mismatch = protocol::protocol_mismatch(replies[2].optional_string());
            if (!mismatch.empty()) throw Error("queue '" + options_.queue + "': " + mismatch);
            declared_.update(replies[1].optional_string().value_or(""));
            return true;
        }
        auto now = Clock::now();
        if (now >= deadline) {
            throw Error("unknown queue '" + options_.queue +
                        "': no dispatcher has announced it (key " + keys_.queue.meta +
                        " is missing)");
        }
        if (stoppable && stop_.load()) return false;
        std::this_thread::sleep_for(std::min<Clock::duration>(kQueuePoll, deadline - now));
    }
}

std::optional<std::string> Membership::beat(Session& s, bool first) {
    // With Sentinel or Cluster, the queue's node changing means a failover (or a resharding),
    // which may have lost reports: the tasks in our processing list go back (see
    // common/lua/give_back.lua). Judged by the node, not by a failure: this session may have
    // connected to the new master without ever failing, while other sessions wrote to the old one.
    const auto node = redis::to_string(s.node());
    const bool replicated = !options_.redis.sentinels.empty() || !options_.redis.cluster.empty();
    if (replicated && !beat_on_.empty() && node != beat_on_) give_back(s);
    static const std::string host = protocol::host_name();
    const auto info = protocol::format_worker_info({host, "cpp", ROWPUMP_VERSION, reporter_.done(),
                                                    options_.heartbeat_ttl.count()}) +
                      ";incarnation=" + incarnation_;
    std::vector<std::string> args{options_.worker_id, info,
                                  std::to_string(options_.heartbeat_ttl.count()), incarnation_};
    if (first) {
        args.push_back(" retry reason=" +
                       protocol::percent_encode("worker " + options_.worker_id +
                                                " restarted before reporting it") +
                       " delay=0ms");
    }
    // The heartbeat before the workers set: a listed worker without one is reaped.
    const auto reply =
        s.eval(protocol::kBeatScript,
               {keys_.heartbeat, keys_.queue.workers, keys_.processing, keys_.queue.done}, args)
            .value();
    if (reply.type == redis::Value::Type::array) {
        return reply.elements.empty() ? std::string() : reply.elements.front().text;
    }
    if (reply.integer > 0) {
        log_.line("gave " + std::to_string(reply.integer) + " task(s) left in " + keys_.processing +
                  " by an earlier process of worker id '" + options_.worker_id +
                  "' back as retries");
    }
    // The dispatcher may be restarted with another on_success: follow it.
    if (auto values =
            s.command({"HGET", keys_.queue.meta, protocol::kMetaValues}).optional_string()) {
        declared_.update(*values);
    }
    log_.redis_ok();
    beat_on_ = node;
    return std::nullopt;
}

bool Membership::take_over(Session& s, std::string other) {
    auto refuse = [&](const std::string& why) {
        throw Error("worker id '" + options_.worker_id + "' is in use by another live process " +
                    why + " (heartbeat " + keys_.heartbeat + ": '" + log_text(other, 200) +
                    "'); give each process a worker_id of its own");
    };
    log_.line("worker id '" + options_.worker_id +
              "' has a heartbeat of another process; starting once it lapses");
    std::int64_t last_ttl = s.command({"PTTL", keys_.heartbeat}).integer();
    for (;;) {
        if (last_ttl == -1) refuse("(its heartbeat has no TTL)");
        sleep_unless(kTakeOverPoll, stop_);
        if (stop_.load()) return false;
        auto replies = s.pipeline({{"GET", keys_.heartbeat}, {"PTTL", keys_.heartbeat}});
        const auto value = replies[0].optional_string();
        if (!value) {  // it lapsed, or its process stopped: ours, unless another came first
            auto again = beat(s, true);
            if (!again) return true;
            other = std::move(*again);
            last_ttl = s.command({"PTTL", keys_.heartbeat}).integer();
            continue;
        }
        const auto ttl = replies[1].integer();
        if (*value != other || ttl > last_ttl) refuse("(it renewed its heartbeat)");
        last_ttl = ttl;
    }
}

void Membership::keep_beating(Session& s) {
    if (auto other = beat(s, false)) {
        // Ours lapsed and another process took the worker id over (and gave back what we
        // held): stop taking tasks into a list that is no longer ours.
        {
            std::lock_guard<std::mutex> lock(superseded_mutex_);
            superseded_ = "worker id '" + options_.worker_id +
                          "' was taken over by another process while this one's heartbeat "
                          "had lapsed (heartbeat " +
                          keys_.heartbeat + ": '" + log_text(*other, 200) +
                          "'); give each process a worker_id of its own";
        }
        log_.line(superseded());
        stop_.store(true);
    }
}

std::string Membership::superseded() const {
    std::lock_guard<std::mutex> lock(superseded_mutex_);
    return superseded_;
}

// Should this fail, the beat fails with it, and the next beat tries again.
void Membership::give_back(Session& s) {
    const auto given =
        s.eval(protocol::kGiveBackScript, {keys_.processing, keys_.queue.ready}, {}).integer();
    if (given > 0) {
        log_.line("Redis failed over: gave " + std::to_string(given) +
                  " task(s) in hand back to the ready list; they run again");
    }
}

void Membership::leave() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!joined_.load()) return;
    if (pid_ != getpid()) {  // a child after fork(): the heartbeat is the parent's
        static_cast<void>(heartbeat_.release());
        joined_.store(false);
        return;
    }
    heartbeat_.reset();  // first, so no beat can list us again after we leave
    joined_.store(false);
    Session s(options_.redis, options_.queue);
    auto backoff = redis_backoff();
    for (int attempt = 1;; ++attempt) {
        try {
            auto left = s.eval(protocol::kLeaveScript,
                               {keys_.heartbeat, keys_.processing, keys_.queue.workers},
                               {options_.worker_id, incarnation_})
                            .integer();
            if (left < 0) {
                log_.line("left the heartbeat alone: another process holds worker id '" +
                          options_.worker_id + "'");
            } else if (left > 0) {
                log_.line(std::to_string(left) + " task(s) left in " + keys_.processing +
                          "; the dispatcher takes them back");
            }
            return;
        } catch (const std::exception& e) {
            if (attempt == 3) {
                log_.line(std::string("could not sign off (") + e.what() +
                          "); the heartbeat lapses on its own");
                return;
            }
        }
        std::this_thread::sleep_for(backoff.next());
    }
}

}  // namespace rowpump::details
