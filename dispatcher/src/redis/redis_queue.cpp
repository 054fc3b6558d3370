#include "rowpump/dispatcher/redis/redis_queue.hpp"

#include <algorithm>
#include <cstdio>
#include <random>
#include <string_view>

#include <spdlog/spdlog.h>

#include "rowpump/common/duration.hpp"
#include "rowpump/common/protocol/scripts.hpp"
#include "rowpump/dispatcher/loop/key_limits.hpp"
#include "rowpump/dispatcher/loop/token_mac.hpp"

namespace rowpump {

namespace {

// Most bytes of done messages read per cycle (take_done.lua): a thousand reports of a few
// hundred bytes fit many times over; a thousand of the longest allowed would be 64 MiB.
constexpr std::int64_t kDoneBytesPerCycle = 4 * 1024 * 1024;

// The done message that reports a row failed because its ready message would take `bytes`,
// more than payload_max: the dispatcher applies it like any fail (the row is dead, with the
// reason in its error column).
std::string oversized_report(const ClaimedRow& row, std::size_t bytes, std::int64_t max) {
    protocol::Done done;
    done.task.id = row.id;
    done.task.token = row.token;
    done.verb = Verb::fail;
    done.reason = "payload: the ready message would take " + std::to_string(bytes) +
                  " bytes, more than payload_max (" + std::to_string(max) + " bytes)";
    return protocol::format_done(done);
}

// An outcome put back because its row was locked goes aside only once it is applied.
std::vector<std::string> refused_messages(const std::vector<DoneEntry>& entries) {
    std::vector<std::string> refused;
    for (const auto& entry : entries) {
        if (entry.set_aside() && !entry.locked) refused.push_back(entry.message);
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

// Every script of the protocol, the workers' too: a worker whose Redis user may not load
// scripts (docs/operations.md, "Least privilege") runs them by SHA1 only, so the dispatcher loads
// them for it, when it opens the queue and whenever it finds Redis has lost them.
void load_scripts(redis::Connection& conn) {
    redis::Script::load(
        conn,
        {&protocol::kReapScript, &protocol::kPushScript, &protocol::kLeadScript,
         &protocol::kResignScript, &protocol::kAckDoneScript, &protocol::kHeldScript,
         &protocol::kRouteDoneScript, &protocol::kReapToDoneScript, &protocol::kTakeDoneScript,
         &protocol::kCompleteScript, &protocol::kTakeScript, &protocol::kLeaveScript,
         &protocol::kGiveBackScript, &protocol::kBeatScript, &protocol::kKeyLimitsScript});
}

}  // namespace

RedisQueue::RedisQueue(redis::Connection conn, const QueueConfig& queue, std::string leader_id)
    : conn_(std::move(conn)),
      queue_(queue),
      keys_(protocol::keys_for(queue.name)),
      leader_id_(std::move(leader_id)) {
    if (!queue.shard) return;
    // A shard's runner leads, reads and acknowledges its own lists; workers still report to
    // the queue's done list, from where route_done() takes each report to its shard.
    queue_done_ = keys_.done;
    for (const auto& shard : queue.shards) {
        shard_done_.push_back(keys_.shard_done(shard.name));
        shard_leader_.push_back(keys_.shard_leader(shard.name));
    }
    const auto& name = queue.shards.at(*queue.shard).name;
    standby_ = keys_.shard_standby(name);
    keys_.leader = keys_.shard_leader(name);
    keys_.done = keys_.shard_done(name);
}

RedisQueue RedisQueue::open(const RedisAddress& address, const QueueConfig& queue,
                            std::string leader_id) {
    RedisQueue rq(redis::Connection::connect_for(address, protocol::keys_for(queue.name).prefix),
                  queue, std::move(leader_id));
    load_scripts(rq.conn_);
    return rq;
}

// A value for the epoch key that no other leader writes, also not this one again after Redis
// lost its data.
std::string RedisQueue::fresh_epoch() {
    static thread_local std::mt19937_64 random(std::random_device{}());
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(random()));
    return leader_id_ + ":" + text;
}

RedisQueue::Lead RedisQueue::lead() {
    const auto reply =
        protocol::kLeadScript
            .eval(conn_, {keys_.leader, keys_.epoch},
                  {leader_id_, std::to_string(queue_.leader_timeout.count()), fresh_epoch()})
            .strings();
    if (reply.size() != 3) throw redis::ReplyError("the lead script returned no holder");
    return {reply[0], reply[1] == "1", reply[2]};
}

void RedisQueue::resign() {
    protocol::kResignScript.eval(conn_, {keys_.leader}, {leader_id_});
}

void RedisQueue::announce() {
    protocol::QueueMeta meta;
    if (queue_.on_success) meta.values = queue_.on_success->placeholders;
    meta.lease = queue_.lease;
    meta.table = queue_.table;
    std::vector<std::string> args{"HSET", keys_.meta};
    for (auto& field : protocol::meta_fields(meta)) args.push_back(std::move(field));
    try {
        conn_.command(args);
    } catch (const redis::ReplyError& e) {
        if (!redis::is_wrong_type(e.what())) throw;
        // Only dispatchers write the meta hash, and all of it: whatever is there goes.
        spdlog::warn("queue {}: {} was not a hash; written anew", queue_.name, keys_.meta);
        conn_.command({"DEL", keys_.meta});
        conn_.command(args);
    }
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

PushWindow RedisQueue::push(const std::vector<ClaimedRow>& rows, const std::vector<KeyRate>& keys) {
    const auto rate = queue_.rate.value_or(Rate{});
    std::vector<std::string> args{
        std::to_string(rate.count), std::to_string(rate.per.count() * 1000),
        protocol::kStatDispatched, leader_id_, std::to_string(queue_.leader_timeout.count()),
        // One leader per shard, one ready list: checked in Redis.
        queue_.shard ? std::to_string(queue_.max_backlog) : "0", std::to_string(keys.size())};
    args.reserve(args.size() + 4 * keys.size() + rows.size());
    for (const auto& key : keys) {
        args.push_back(key.field);
        args.push_back(std::to_string(key.rate.count));
        args.push_back(std::to_string(key.rate.per.count() * 1000));
        args.push_back(std::to_string(key.rows));
    }
    // A row whose ready message would pass payload_max is not pushed: it is reported failed in
    // the done list, as a worker would report it, so it is marked dead with the reason. Until
    // that is applied, the done list holds its claim (held.lua).
    std::vector<std::string> oversized{"RPUSH", keys_.done};
    for (const auto& row : rows) {
        auto message = protocol::format_ready(row.id, row.token, queue_.payload, row.payload);
        // Without a payload nothing is checked: a queue whose ids are long keeps working.
        if (queue_.payload.empty() ||
            static_cast<std::int64_t>(message.size()) <= queue_.payload_max) {
            args.push_back(std::move(message));
        } else {
            oversized.push_back(oversized_report(row, message.size(), queue_.payload_max));
        }
    }
    const auto reply =
        protocol::kPushScript
            .eval(conn_, {keys_.ready, keys_.window, keys_.stats, keys_.leader, keys_.key_rate},
                  args)
            .strings();
    if (reply.size() < 3) throw redis::ReplyError("the push script returned no window");
    PushWindow window{reply[0] != "-1",
                      reply[0] == "1",
                      std::stoll(reply[1]),
                      std::chrono::microseconds(std::stoll(reply[2])),
                      {}};
    if (window.leader) {
        if (reply.size() != 3 + 2 * keys.size())
            throw redis::ReplyError("the push script returned no window for each key");
        for (std::size_t i = 0; i < keys.size(); ++i) {
            window.keys.push_back({std::stoll(reply[3 + 2 * i]),
                                   std::chrono::microseconds(std::stoll(reply[4 + 2 * i]))});
        }
    }
    if (window.pushed && oversized.size() > 2) {
        conn_.command(oversized);
        spdlog::warn(
            "queue {}: {} row(s) whose ready message would pass payload_max ({} bytes) "
            "reported failed instead of pushed",
            queue_.label(), oversized.size() - 2, queue_.payload_max);
    }
    return window;
}

std::vector<std::pair<std::string, std::string>> RedisQueue::key_limits(std::size_t most) {
    // Fields and values cut one byte past what a key or a value may be: too long all the same.
    const auto flat = protocol::kKeyLimitsScript
                          .eval(conn_, {keys_.key_limits},
                                {std::to_string(most), std::to_string(kMaxLimitValueBytes + 1)})
                          .strings();
    if (flat.size() % 2 == 1) {
        throw redis::ReplyError(keys_.key_limits + " holds " + flat[0] + " keys, more than " +
                                std::to_string(most));
    }
    std::vector<std::pair<std::string, std::string>> out;
    for (std::size_t i = 0; i + 1 < flat.size() && out.size() < most; i += 2)
        out.emplace_back(flat[i], flat[i + 1]);
    return out;
}

RedisQueue::Inbox RedisQueue::take_done(std::int64_t max) {
    std::vector<std::string> route_keys, route_args;
    if (queue_.shard) {
        route_keys.push_back(queue_done_);
        route_keys.insert(route_keys.end(), shard_done_.begin(), shard_done_.end());
        // All shards' reports: each leader routes what it finds, so a shard whose server is
        // down never holds up the others' reports.
        route_args.push_back(std::to_string(max * static_cast<std::int64_t>(shard_done_.size())));
        conn_.append(protocol::kRouteDoneScript.evalsha(route_keys, route_args));
    }
    conn_.append({"EXISTS", keys_.paused});
    conn_.append(protocol::kTakeDoneScript.evalsha(
        {keys_.done, keys_.bad, keys_.stats},
        {std::to_string(max), std::to_string(protocol::kMaxMessageBytes),
         std::to_string(kDoneBytesPerCycle), protocol::kStatBad}));
    std::vector<redis::Reply> replies;
    try {
        replies = conn_.read_replies(queue_.shard ? 3 : 2);
    } catch (const redis::ReplyError& e) {
        if (!redis::Script::is_noscript(e)) throw;
        // Redis lost its scripts (restarted, or a replica took over): load them again, the
        // workers' too, and read.
        load_scripts(conn_);
        return take_done(max);
    }
    const std::size_t first = queue_.shard ? 1 : 0;
    Inbox inbox;
    inbox.paused = replies[first].integer() == 1;
    auto messages = replies[first + 1].strings();
    if (messages.size() < 2) throw redis::ReplyError("the take_done script returned no counts");
    const auto aside = std::stoll(messages[0]);
    inbox.more = messages[1] == "1";
    messages.erase(messages.begin(), messages.begin() + 2);
    if (aside > 0) {
        spdlog::warn("queue {}: {} done message(s) longer than {} bytes moved to {} unread",
                     queue_.name, aside, protocol::kMaxMessageBytes, keys_.bad);
    }
    const auto declared =
        queue_.on_success ? queue_.on_success->placeholders : std::vector<std::string>{};
    std::vector<DoneEntry> entries(messages.size());
    std::int64_t cut = 0;
    for (std::size_t i = 0; i < messages.size(); ++i) {
        auto& entry = entries[i];
        entry.done = protocol::parse_done(messages[i], entry.error);
        if (entry.done && entry.done->verb == Verb::extend &&
            entry.done->lease > queue_.max_lease) {
            entry.done->lease = queue_.max_lease;
            ++cut;
        }
        if (entry.done) {
            auto problem = protocol::value_problem(*entry.done, declared);
            if (!problem.empty()) apply_as_failed_attempt(entry, std::move(problem));
        }
        entry.message = std::move(messages[i]);
    }
    if (cut > 0) {
        spdlog::warn("queue {}: {} extend(s) asked for a lease over max_lease {}; cut to it",
                     queue_.name, cut, format_duration(queue_.max_lease));
    }
    inbox.done = std::move(entries);
    return inbox;
}

bool RedisQueue::ack_done(const std::vector<DoneEntry>& entries, StatsDelta stats) {
    // One script: the batch leaves the done list exactly when it is counted, and only while
    // this dispatcher leads (two dispatchers trimming the list would each remove what the
    // other read).
    const auto refused = refused_messages(entries);
    std::vector<std::string> back;
    for (const auto& entry : entries) {
        if (entry.locked) back.push_back(entry.message);
    }
    stats[protocol::kStatBad] += static_cast<std::int64_t>(refused.size());
    std::vector<std::string> args{leader_id_, std::to_string(entries.size()),
                                  std::to_string(refused.size()), std::to_string(back.size())};
    args.insert(args.end(), refused.begin(), refused.end());
    args.insert(args.end(), back.begin(), back.end());
    for (const auto& [field, amount] : stats) {
        if (amount == 0) continue;
        args.push_back(field);
        args.push_back(std::to_string(amount));
    }
    return protocol::kAckDoneScript
               .eval(conn_, {keys_.leader, keys_.done, keys_.bad, keys_.stats}, args)
               .integer() == 1;
}

void RedisQueue::add_stats(const StatsDelta& stats) {
    std::size_t replies = 0;
    append_stats(stats, replies);
    conn_.read_replies(replies);
}

void RedisQueue::offer_standby() {
    conn_.command(
        {"SET", standby_, leader_id_, "PX", std::to_string(queue_.leader_timeout.count())});
}

RedisQueue::ShardLeaders RedisQueue::shard_leaders() {
    for (const auto& key : shard_leader_) conn_.append({"GET", key});
    conn_.append({"GET", standby_});
    ShardLeaders out;
    for (auto& reply : conn_.read_replies(shard_leader_.size() + 1)) {
        out.leaders.push_back(reply.optional_string().value_or(""));
    }
    out.standby = std::move(out.leaders.back());
    out.leaders.pop_back();
    return out;
}

std::vector<std::string> RedisQueue::held(const std::vector<std::string>& messages) {
    if (messages.empty()) return {};  // the script would list every task
    return look_held(messages);
}

std::vector<std::string> RedisQueue::held_all() {
    return look_held({});
}

std::string RedisQueue::token_secret() {
    conn_.command({"SET", keys_.secret, TokenMac::fresh_secret(), "NX"});
    auto secret =
        conn_.command({"GETRANGE", keys_.secret, "0", std::to_string(TokenMac::kSecretDigits)})
            .string();
    if (!TokenMac::valid_secret(secret)) {
        throw redis::ReplyError(keys_.secret + " holds no token secret (" +
                                std::to_string(TokenMac::kSecretDigits) +
                                " hex digits); delete it, and the next leader writes one");
    }
    return secret;
}

std::vector<std::string> RedisQueue::look_held(const std::vector<std::string>& messages) {
    std::vector<std::string> keys{keys_.ready, keys_.done, keys_.workers};
    if (queue_.shard) keys.push_back(queue_done_);  // reports not routed yet
    std::vector<std::string> args{keys_.processing("")};
    args.insert(args.end(), messages.begin(), messages.end());
    return protocol::kHeldScript.eval(conn_, keys, args).strings();
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

}  // namespace rowpump
