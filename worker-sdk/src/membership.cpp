#include "membership.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <thread>

#include "rowpump/common/protocol/queue_meta.hpp"
#include "rowpump/common/protocol/scripts.hpp"
#include "rowpump/common/protocol/worker_info.hpp"
#include "rowpump/common/redis/redis_route.hpp"

namespace rowpump::details {

namespace {

constexpr milliseconds kQueuePoll{200};

}  // namespace

Membership::Membership(const WorkerOptions& options, const WorkerKeys& keys,
                       DeclaredValues& declared, const Reporter& reporter, WorkerLog& log,
                       const std::atomic<bool>& stop)
    : options_(options),
      keys_(keys),
      declared_(declared),
      reporter_(reporter),
      log_(log),
      stop_(stop) {}

bool Membership::join(bool survive_outages) {
    if (joined_.load(std::memory_order_acquire)) return true;
    std::lock_guard<std::mutex> lock(mutex_);
    if (joined_.load(std::memory_order_relaxed)) return true;
    const auto deadline = Clock::now() + options_.queue_wait;
    Session s(options_.redis, options_.queue);
    auto backoff = redis_backoff();
    for (;;) {
        try {
            if (!wait_for_queue(s, deadline, survive_outages)) return false;
            // Every script a worker runs, so that none costs a NOSCRIPT round trip later (the
            // leave script at stop, the give-back after a failover).
            s.load({&protocol::kCompleteScript, &protocol::kTakeScript, &protocol::kLeaveScript,
                    &protocol::kGiveBackScript});
            // The first beat precedes the first BLMOVE, so the dispatcher never sees tasks
            // in our processing list without a heartbeat.
            beat(s);
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
        [this](Session& hs) { beat(hs); },
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

void Membership::beat(Session& s) {
    // With Sentinel or Cluster, the queue's node changing means a failover (or a resharding),
    // which may have lost reports: the tasks in our processing list go back (see
    // common/lua/give_back.lua). Judged by the node, not by a failure: this session may have
    // connected to the new master without ever failing, while other sessions wrote to the old one.
    const auto node = redis::to_string(s.node());
    const bool replicated = !options_.redis.sentinels.empty() || !options_.redis.cluster.empty();
    if (replicated && !beat_on_.empty() && node != beat_on_) give_back(s);
    // SET before SADD: a listed worker without a heartbeat is one the dispatcher reaps.
    static const std::string host = protocol::host_name();
    const auto info = protocol::format_worker_info(
        {host, "cpp", ROWPUMP_VERSION, reporter_.done(), options_.heartbeat_ttl.count()});
    auto replies = s.pipeline(
        {{"SET", keys_.heartbeat, info, "PX", std::to_string(options_.heartbeat_ttl.count())},
         {"SADD", keys_.queue.workers, options_.worker_id},
         {"HGET", keys_.queue.meta, protocol::kMetaValues}});
    // The dispatcher may be restarted with another on_success: follow it.
    if (auto values = replies[2].optional_string()) declared_.update(*values);
    log_.redis_ok();
    beat_on_ = node;
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
    heartbeat_.reset();  // first, so no beat can list us again after we leave
    joined_.store(false);
    Session s(options_.redis, options_.queue);
    auto backoff = redis_backoff();
    for (int attempt = 1;; ++attempt) {
        try {
            auto left = s.eval(protocol::kLeaveScript,
                               {keys_.heartbeat, keys_.processing, keys_.queue.workers},
                               {options_.worker_id})
                            .integer();
            if (left > 0) {
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
