// RedisQueue's side of the workers' heartbeats: taking back the tasks of workers whose
// heartbeat expired (the reap scripts), and the Redis server's clock the reaper checks before
// it believes an expiry (loop/redis_clock_watch.hpp).

#include <spdlog/spdlog.h>

#include "rowpump/common/duration.hpp"
#include "rowpump/common/protocol/scripts.hpp"
#include "rowpump/dispatcher/redis/redis_queue.hpp"

namespace rowpump {

namespace {

// " retry reason=... delay=0ms": what a dead worker's task is reported as (due again at once).
std::string reaped_suffix(const std::string& worker_id) {
    protocol::Done done;
    done.verb = Verb::retry;
    done.reason = "worker " + worker_id + " stopped sending heartbeats";
    done.delay = Millis(0);
    done.task.message = "-";
    return protocol::format_done(done).substr(1);
}

}  // namespace

std::int64_t RedisQueue::server_time_ms() {
    const auto time = conn_.command({"TIME"}).strings();
    if (time.size() != 2) throw redis::ReplyError("TIME: not a (seconds, microseconds) pair");
    try {
        return std::stoll(time[0]) * 1000 + std::stoll(time[1]) / 1000;
    } catch (const std::exception&) {
        throw redis::ReplyError("TIME: not a (seconds, microseconds) pair");
    }
}

std::vector<ReapedWorker> RedisQueue::reap_dead_workers() {
    std::vector<ReapedWorker> reaped;
    std::vector<std::string> workers;
    try {
        workers = conn_.command({"SMEMBERS", keys_.workers}).strings();
    } catch (const redis::ReplyError& e) {
        if (!redis::is_wrong_type(e.what())) throw;
        // Workers list themselves again with their next heartbeat (SADD).
        spdlog::warn("queue {}: {} was not a set; deleted", queue_.name, keys_.workers);
        conn_.command({"DEL", keys_.workers});
        return reaped;
    }
    for (const auto& worker : workers) {
        if (queue_.shard) {
            const auto reported = protocol::kReapToDoneScript
                                      .eval(conn_,
                                            {keys_.heartbeat(worker), keys_.processing(worker),
                                             keys_.workers, queue_done_, keys_.stats},
                                            {worker, reaped_suffix(worker), protocol::kStatReaped})
                                      .integer();
            if (reported > 0) reaped.push_back({worker, {}, 0, static_cast<std::size_t>(reported)});
            continue;
        }
        auto taken =
            protocol::kReapScript
                .eval(conn_, {keys_.heartbeat(worker), keys_.processing(worker), keys_.workers},
                      {worker})
                .strings();
        if (taken.empty()) continue;
        ReapedWorker r{worker, {}, 0, 0};
        std::vector<std::string> malformed;
        for (auto& message : taken) {
            std::string error;
            if (auto task = protocol::parse_ready(message, error)) {
                r.tasks.push_back(std::move(*task));
            } else {
                malformed.push_back(std::move(message));
            }
        }
        r.malformed = malformed.size();
        if (!malformed.empty()) {
            std::size_t replies = 0;
            append_aside(malformed, {}, replies);
            conn_.read_replies(replies);
        }
        reaped.push_back(std::move(r));
    }
    return reaped;
}

}  // namespace rowpump
