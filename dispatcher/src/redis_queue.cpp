#include "rowpump/dispatcher/redis_queue.hpp"

#include <algorithm>

#include "rowpump/common/leader_scripts.hpp"
#include "rowpump/common/push_scripts.hpp"

namespace rowpump {

namespace {

std::vector<std::string> refused_messages(const std::vector<DoneEntry>& entries) {
    std::vector<std::string> refused;
    for (const auto& entry : entries) {
        if (entry.set_aside()) refused.push_back(entry.message);
    }
    return refused;
}

// A report whose values do not fit the queue counts as a failed attempt: a worker that keeps
// sending it (a plain-protocol worker has no SDK to check it first) uses up the row's
// attempts, instead of the row coming back after each lease for ever.
// An extend stays refused: its task is still in hand.
void apply_as_failed_attempt(DoneEntry& entry, std::string problem) {
    auto& done = *entry.done;
    if (done.verb == Verb::extend) {
        entry.error = std::move(problem);
        return;
    }
    if (done.verb == Verb::success) {
        done.verb = Verb::retry;
        done.reason = problem;
    }
    done.values.clear();
    entry.problem = std::move(problem);
}

}  // namespace

RedisQueue::RedisQueue(redis::Connection conn, const QueueConfig& queue, std::string leader_id)
    : conn_(std::move(conn)),
      queue_(queue),
      keys_(protocol::keys_for(queue.name)),
      leader_id_(std::move(leader_id)) {}

RedisQueue RedisQueue::open(const RedisAddress& address, const QueueConfig& queue,
                            std::string leader_id) {
    RedisQueue rq(redis::Connection::connect_for(address, protocol::keys_for(queue.name).prefix),
                  queue, std::move(leader_id));
    for (const char* script :
         {protocol::kReapScript, protocol::kPushScript, protocol::kLeadScript,
          protocol::kResignScript, protocol::kAckDoneScript, protocol::kHeldScript}) {
        rq.conn_.append({"SCRIPT", "LOAD", script});
    }
    auto shas = rq.conn_.read_replies(6);
    rq.reap_sha_ = shas[0].string();
    rq.push_sha_ = shas[1].string();
    rq.lead_sha_ = shas[2].string();
    rq.resign_sha_ = shas[3].string();
    rq.ack_sha_ = shas[4].string();
    rq.held_sha_ = shas[5].string();
    return rq;
}

std::string RedisQueue::lead() {
    return conn_
        .command({"EVALSHA", lead_sha_, "1", keys_.leader, leader_id_,
                  std::to_string(queue_.leader_timeout.count())})
        .string();
}

void RedisQueue::resign() {
    conn_.command({"EVALSHA", resign_sha_, "1", keys_.leader, leader_id_});
}

void RedisQueue::announce() {
    protocol::QueueMeta meta;
    if (queue_.on_success) meta.values = queue_.on_success->placeholders;
    meta.lease = queue_.lease;
    meta.table = queue_.table;
    std::vector<std::string> args{"HSET", keys_.meta};
    for (auto& field : protocol::meta_fields(meta)) args.push_back(std::move(field));
    conn_.command(args);
}

std::int64_t RedisQueue::ready_length() {
    return conn_.command({"LLEN", keys_.ready}).integer();
}

void RedisQueue::append_stats(const StatsDelta& stats, std::size_t& replies) {
    for (const auto& [field, amount] : stats) {
        if (amount == 0) continue;
        conn_.append({"HINCRBY", keys_.stats, field, std::to_string(amount)});
        ++replies;
    }
}

PushWindow RedisQueue::push(const std::vector<ClaimedRow>& rows) {
    const auto rate = queue_.rate.value_or(Rate{});
    std::vector<std::string> args{"EVALSHA",
                                  push_sha_,
                                  "4",
                                  keys_.ready,
                                  keys_.window,
                                  keys_.stats,
                                  keys_.leader,
                                  std::to_string(rate.count),
                                  std::to_string(rate.per.count() * 1000),
                                  protocol::kStatDispatched,
                                  leader_id_,
                                  std::to_string(queue_.leader_timeout.count())};
    args.reserve(args.size() + rows.size());
    for (const auto& row : rows) args.push_back(protocol::format_ready(row.id, row.token));
    const auto reply = conn_.command(args).strings();
    if (reply.size() != 3) throw redis::ReplyError("the push script returned no window");
    return {reply[0] != "-1", reply[0] == "1", std::stoll(reply[1]),
            std::chrono::microseconds(std::stoll(reply[2]))};
}

RedisQueue::Inbox RedisQueue::take_done(std::int64_t max) {
    conn_.append({"EXISTS", keys_.paused});
    conn_.append({"LRANGE", keys_.done, "0", std::to_string(max - 1)});
    auto replies = conn_.read_replies(2);
    Inbox inbox;
    inbox.paused = replies[0].integer() == 1;
    auto messages = replies[1].strings();
    const auto declared =
        queue_.on_success ? queue_.on_success->placeholders : std::vector<std::string>{};
    std::vector<DoneEntry> entries(messages.size());
    for (std::size_t i = 0; i < messages.size(); ++i) {
        auto& entry = entries[i];
        entry.done = protocol::parse_done(messages[i], entry.error);
        if (entry.done) {
            auto problem = protocol::value_problem(*entry.done, declared);
            if (!problem.empty()) apply_as_failed_attempt(entry, std::move(problem));
        }
        entry.message = std::move(messages[i]);
    }
    inbox.done = std::move(entries);
    return inbox;
}

bool RedisQueue::ack_done(const std::vector<DoneEntry>& entries, StatsDelta stats) {
    // One script: the batch leaves the done list exactly when it is counted, and only while
    // this dispatcher leads (two dispatchers trimming the list would each remove what the
    // other read).
    const auto refused = refused_messages(entries);
    stats[protocol::kStatBad] += static_cast<std::int64_t>(refused.size());
    std::vector<std::string> args{"EVALSHA",
                                  ack_sha_,
                                  "4",
                                  keys_.leader,
                                  keys_.done,
                                  keys_.bad,
                                  keys_.stats,
                                  leader_id_,
                                  std::to_string(entries.size()),
                                  std::to_string(refused.size())};
    args.insert(args.end(), refused.begin(), refused.end());
    for (const auto& [field, amount] : stats) {
        if (amount == 0) continue;
        args.push_back(field);
        args.push_back(std::to_string(amount));
    }
    return conn_.command(args).integer() == 1;
}

void RedisQueue::add_stats(const StatsDelta& stats) {
    std::size_t replies = 0;
    append_stats(stats, replies);
    conn_.read_replies(replies);
}

std::vector<std::string> RedisQueue::held(const std::vector<std::string>& messages) {
    std::vector<std::string> args{"EVALSHA",     held_sha_,           "3", keys_.ready, keys_.done,
                                  keys_.workers, keys_.processing("")};
    args.insert(args.end(), messages.begin(), messages.end());
    return conn_.command(args).strings();
}

void RedisQueue::move_aside(const std::vector<DoneEntry>& entries, StatsDelta stats) {
    std::size_t replies = 0;
    append_aside(refused_messages(entries), std::move(stats), replies);
    conn_.read_replies(replies);
}

void RedisQueue::append_aside(const std::vector<std::string>& bad, StatsDelta stats,
                              std::size_t& replies) {
    if (!bad.empty()) {
        std::vector<std::string> args{"RPUSH", keys_.bad};
        args.insert(args.end(), bad.begin(), bad.end());
        conn_.append(args);
        ++replies;
    }
    stats[protocol::kStatBad] += static_cast<std::int64_t>(bad.size());
    append_stats(stats, replies);
}

std::vector<ReapedWorker> RedisQueue::reap_dead_workers() {
    std::vector<ReapedWorker> reaped;
    for (const auto& worker : conn_.command({"SMEMBERS", keys_.workers}).strings()) {
        auto taken = conn_
                         .command({"EVALSHA", reap_sha_, "3", keys_.heartbeat(worker),
                                   keys_.processing(worker), keys_.workers, worker})
                         .strings();
        if (taken.empty()) continue;
        ReapedWorker r{worker, {}, 0};
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
