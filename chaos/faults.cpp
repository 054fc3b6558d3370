#include "faults.hpp"

#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/protocol/messages.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"

namespace rowpump::chaos {

using namespace std::chrono_literals;

FaultPlayer::FaultPlayer(Cluster& cluster, std::atomic<int>& redis_epoch)
    : cluster_(cluster), redis_epoch_(redis_epoch) {}

FaultRecord FaultPlayer::play(const Fault& fault) {
    FaultRecord r;
    r.fault = fault;
    r.start = now_micros();
    switch (fault.kind) {
        case FaultKind::kill_worker:
            kill_worker(r, false);
            break;
        case FaultKind::restart_worker:
            kill_worker(r, true);
            break;
        case FaultKind::freeze_worker:
            freeze_worker(r);
            break;
        case FaultKind::kill_leader:
            kill_dispatcher(r, true);
            break;
        case FaultKind::kill_standby:
            kill_dispatcher(r, false);
            break;
        case FaultKind::freeze_leader:
            freeze_leader(r);
            break;
        case FaultKind::redis_restart_kept:
            redis_restart(r, true);
            break;
        case FaultKind::redis_restart_lost:
            redis_restart(r, false);
            break;
        case FaultKind::mysql_kill:
            mysql_kill(r);
            break;
        case FaultKind::mysql_down:
            mysql_down(r);
            break;
        case FaultKind::row_locks:
            row_locks(r);
            break;
        case FaultKind::malformed:
            malformed(r);
            break;
        case FaultKind::db_time_zone:
            db_time_zone(r);
            break;
        case FaultKind::row_lock_long:
            row_lock_long(r);
            break;
        case FaultKind::push_reply_cut:
            push_reply_cut(r);
            break;
    }
    r.end = now_micros();
    return r;
}

namespace {

std::string named(Cluster& cluster, pid_t pid) {
    auto it = cluster.names().find(pid);
    return (it == cluster.names().end() ? std::string("?") : it->second) + " (pid " +
           std::to_string(pid) + ")";
}

// The token of a ready or done message: its first word's part after the last ':'.
std::string token_of(const std::string& message) {
    const std::string word = message.substr(0, message.find(' '));
    const auto colon = word.rfind(':');
    return colon == std::string::npos ? std::string() : word.substr(colon + 1);
}

// Adds the tokens of every message in `key` (a list) to `tokens`; returns how many it read.
std::size_t add_tokens(redis::Connection& redis, const std::string& key,
                       std::set<std::string>& tokens) {
    const auto messages = redis.command({"LRANGE", key, "0", "-1"}).strings();
    for (const auto& m : messages) tokens.insert(token_of(m));
    return messages.size();
}

}  // namespace

// The worker is stopped first (SIGSTOP), so that its processing list, read then, holds every
// task it can have run without reporting: those are the tasks the kill takes. (If reading
// fails, it is killed anyway: SIGKILL ends a stopped process.) The fault's check: those tasks
// leave the dead process's processing list (taken back, or given back by its successor under
// the same id) within 15 s, the heartbeat TTL and the reap interval with a wide margin.
void FaultPlayer::kill_worker(FaultRecord& r, bool same_id) {
    constexpr auto kTakenBackWithin = 15s;
    WorkerSlot& slot = cluster_.workers().at(static_cast<std::size_t>(r.fault.target));
    const std::string dead_id = slot.worker_id;
    const std::string key = protocol::keys_for(slot.queue).processing(dead_id);
    std::set<std::string> held;  // the messages, verbatim
    try {
        auto redis = cluster_.redis().connect();
        // At a moment it holds tasks, if it comes within 2 s (fast handlers leave the list
        // empty most of the time).
        testing::eventually(
            2s, [&] { return testing::list_length(redis, key) > 0; }, 1ms);
        slot.process->signal(SIGSTOP);
        for (const auto& m : redis.command({"LRANGE", key, "0", "-1"}).strings()) {
            held.insert(m);
            r.taken.insert(token_of(m));
        }
    } catch (const std::exception& e) {
        r.problem = std::string("reading the worker's processing list: ") + e.what();
    }
    r.pid = cluster_.replace_worker(slot, same_id);
    r.what = named(cluster_, r.pid) + ", " + std::to_string(r.taken.size()) + " tasks in hand" +
             (same_id ? ", restarted as " + slot.worker_id : "");
    if (held.empty()) return;
    std::size_t left = held.size();
    try {
        auto redis = cluster_.redis().connect();
        const bool back = testing::eventually(kTakenBackWithin, [&] {
            left = 0;
            for (const auto& m : redis.command({"LRANGE", key, "0", "-1"}).strings()) {
                left += held.count(m);
            }
            return left == 0;
        });
        if (!back) {
            r.problem = kind_name(r.fault.kind) + ": " + std::to_string(left) + " of the " +
                        std::to_string(held.size()) + " tasks " + dead_id +
                        " held when it was killed still in its processing list 15 s later";
        }
    } catch (const std::exception& e) {
        r.problem = std::string("reading the worker's processing list: ") + e.what();
    }
}

// While frozen, its processing list is read every 20 ms: a fetch Redis served after the
// freeze began (a blocked BLMOVE) lands there before the dispatcher can take it back, since
// that waits for the heartbeat to lapse.
void FaultPlayer::freeze_worker(FaultRecord& r) {
    WorkerSlot& slot = cluster_.workers().at(static_cast<std::size_t>(r.fault.target));
    r.pid = slot.process->pid();
    slot.process->signal(SIGSTOP);
    const auto thaw = std::chrono::steady_clock::now() + r.fault.duration;
    try {
        auto redis = cluster_.redis().connect();
        const std::string key = protocol::keys_for(slot.queue).processing(slot.worker_id);
        while (std::chrono::steady_clock::now() < thaw) {
            add_tokens(redis, key, r.taken);
            std::this_thread::sleep_for(20ms);
        }
    } catch (const std::exception& e) {
        r.problem = std::string("reading the worker's processing list: ") + e.what();
    }
    std::this_thread::sleep_until(thaw);
    slot.process->signal(SIGCONT);
    r.what = named(cluster_, r.pid) + ", " + std::to_string(r.taken.size()) + " tasks in hand";
}

void FaultPlayer::kill_dispatcher(FaultRecord& r, bool leader) {
    testing::Dispatcher* d = leader ? cluster_.leader() : cluster_.standby();
    if (d == nullptr) {
        r.problem = std::string("no ") + (leader ? "leader" : "stand-by") + " to kill";
        return;
    }
    r.pid = cluster_.replace_dispatcher(d);
    r.what = named(cluster_, r.pid);
}

void FaultPlayer::freeze_leader(FaultRecord& r) {
    testing::Dispatcher* d = cluster_.leader();
    if (d == nullptr) {
        r.problem = "no leader to freeze";
        return;
    }
    r.pid = d->process().pid();
    r.what = named(cluster_, r.pid);
    d->signal(SIGSTOP);
    std::this_thread::sleep_for(r.fault.duration);
    d->signal(SIGCONT);
}

void FaultPlayer::redis_restart(FaultRecord& r, bool keep_data) {
    testing::RedisServer& redis = cluster_.redis();
    const std::string snapshot = redis.dir() + "/dump.rdb";
    if (keep_data) {
        // SHUTDOWN SAVE writes the snapshot and exits in one step: nothing written after the
        // snapshot is lost. The server answers by closing the connection.
        try {
            redis.connect().command({"SHUTDOWN", "SAVE"});
        } catch (const std::exception&) {
        }
        redis.stop();  // reaps it
        r.what = "Redis, snapshot kept";
    } else {
        // Writes are paused while every list is read, then the server dies: what it held
        // when it died is what the lists held, and those are the tasks the wipe takes.
        std::size_t messages = 0;
        try {
            auto c = redis.connect();
            c.command({"CLIENT", "PAUSE", "30000", "WRITE"});
            for (const auto& key : c.command({"KEYS", "rowpump:*"}).strings()) {
                if (c.command({"TYPE", key}).string() == "list") {
                    messages += add_tokens(c, key, r.taken);
                }
            }
        } catch (const std::exception& e) {
            r.problem = std::string("reading Redis before the wipe: ") + e.what();
        }
        ++redis_epoch_;
        redis.kill();
        std::filesystem::remove(snapshot);  // an older restart's snapshot must not come back
        r.what = "Redis, data lost (" + std::to_string(messages) + " messages)";
    }
    redis.start();
}

void FaultPlayer::mysql_kill(FaultRecord& r) {
    cluster_.mysql().kill();
    cluster_.mysql().start();
    r.what = "MariaDB";
}

void FaultPlayer::mysql_down(FaultRecord& r) {
    cluster_.mysql().stop();
    std::this_thread::sleep_for(r.fault.duration);
    cluster_.mysql().start();
    r.what = "MariaDB";
}

// Up to `n` ids of `queue`'s tasks in flight (in its ready list or a worker's processing
// list), as an SQL list ("0" if none): rows in flight, in both claim modes. Looks for up to
// 3 s until it finds one: fast workers leave the lists empty most of the time. A Redis
// restart may be played beside it: a read that fails connects again on the next look.
std::string FaultPlayer::in_flight(const std::string& queue, int n) {
    std::optional<redis::Connection> redis;
    const auto keys = protocol::keys_for(queue);
    std::set<std::string> ids;
    testing::eventually(
        3s,
        [&] {
            try {
                if (!redis) redis.emplace(cluster_.redis().connect());
                std::vector<std::string> lists = {keys.ready};
                for (const auto& key :
                     redis->command({"KEYS", keys.prefix + "processing:*"}).strings()) {
                    lists.push_back(key);
                }
                for (const auto& key : lists) {
                    for (const auto& m :
                         redis->command({"LRANGE", key, "0", std::to_string(n - 1)}).strings()) {
                        std::string error;  // the malformed fault's garbage is skipped
                        const auto task = protocol::parse_ready(m, error);
                        if (task && static_cast<int>(ids.size()) < n) ids.insert(task->id);
                    }
                }
            } catch (const std::exception&) {
                redis.reset();
            }
            return !ids.empty();
        },
        5ms);
    // All quoted, none a number: an IN list of mixed types is compared as numbers, which no
    // index of a string id serves, and a locking read through it would lock every row it scans.
    std::string list = testing::sql_quote("0");
    for (const auto& id : ids) list += "," + testing::sql_quote(id);
    return list;
}

// An application transaction holds row locks: on periodic rows about to come due (claims
// must pass over them and take them once the lock goes) and on paced rows already dispatched
// (they wait in the ready list for the rate; their outcomes wait for the lock).
void FaultPlayer::row_locks(FaultRecord& r) {
    try {
        testing::MysqlClient db = cluster_.db();
        db.exec("START TRANSACTION");
        const auto soon = db.column(
            "SELECT id FROM chaos_periodic WHERE next_at > UTC_TIMESTAMP(3) + INTERVAL 100000 "
            "MICROSECOND "
            "AND rounds_left > 0 ORDER BY next_at LIMIT 20 FOR UPDATE");
        const auto held = db.column("SELECT id FROM chaos_paced WHERE done = 0 AND id IN (" +
                                    in_flight("paced", 5) + ") LIMIT 5 FOR UPDATE");
        std::string list;
        for (const auto& id : held) list += (list.empty() ? "" : ",") + id;
        if (!list.empty()) {
            db.exec("UPDATE chaos_paced SET touched = touched + 1 WHERE id IN (" + list + ")");
        }
        std::this_thread::sleep_for(r.fault.duration);
        db.exec("COMMIT");
        r.what = std::to_string(soon.size()) + " periodic rows coming due, " +
                 std::to_string(held.size()) + " paced rows in flight";
    } catch (const std::exception& e) {
        r.problem = std::string("row_locks: ") + e.what();
    }
}

// Garbage in the done list (the dispatcher sets it aside) and in the ready list (a worker
// does): each message must reach the bad list.
void FaultPlayer::malformed(FaultRecord& r) {
    const std::vector<std::string> done_garbage = {"garbage",
                                                   "",
                                                   "no-token ok",
                                                   "1:zz ok",
                                                   "%zz:0123456789ABCDEF-1-1 ok",
                                                   "7:0123456789ABCDEF-1-7 frobnicate",
                                                   std::string("\xff\xfe\x00 ok", 6),
                                                   std::string(5000, 'x')};
    const std::vector<std::string> ready_garbage = {"not a task", "3:", ":0123456789ABCDEF-1-3"};
    try {
        auto redis = cluster_.redis().connect();
        std::int64_t before = 0;
        for (const char* queue : {"once", "periodic"}) {
            before += testing::list_length(redis, protocol::keys_for(queue).bad);
        }
        std::vector<std::string> push = {"RPUSH", protocol::keys_for("once").done};
        push.insert(push.end(), done_garbage.begin(), done_garbage.end());
        redis.command(push);
        push = {"RPUSH", protocol::keys_for("periodic").ready};
        push.insert(push.end(), ready_garbage.begin(), ready_garbage.end());
        redis.command(push);
        const auto expected =
            before + static_cast<std::int64_t>(done_garbage.size() + ready_garbage.size());
        std::int64_t now = 0;
        const bool aside = testing::eventually(30s, [&] {
            now = 0;
            for (const char* queue : {"once", "periodic"}) {
                now += testing::list_length(redis, protocol::keys_for(queue).bad);
            }
            return now >= expected;
        });
        r.what = std::to_string(expected - before) + " messages";
        if (!aside) {
            r.problem = "malformed: " + std::to_string(now - before) + " of " +
                        std::to_string(expected - before) + " messages set aside in 30 s";
        }
    } catch (const std::exception& e) {
        r.problem = std::string("malformed: ") + e.what();
    }
}

}  // namespace rowpump::chaos

namespace rowpump::chaos {

// The server's time zone steps to another offset and back; new sessions (the dispatchers'
// after a reconnect, the feeder's) start in it. Leases must not move.
void FaultPlayer::db_time_zone(FaultRecord& r) {
    try {
        testing::MysqlClient db = cluster_.db();
        const auto before = db.column("SELECT @@GLOBAL.time_zone").at(0);
        db.exec("SET GLOBAL time_zone = '+05:00'");
        std::this_thread::sleep_for(r.fault.duration);
        db.exec("SET GLOBAL time_zone = " + testing::sql_quote(before));
        r.what = "time_zone " + before + " -> +05:00 -> " + before;
    } catch (const std::exception& e) {
        r.problem = std::string("db_time_zone: ") + e.what();
    }
}

// A one-shot row in flight is locked (and updated) by an application transaction for longer
// than the dispatcher's lock wait: its outcome waits for the lock and is applied once the
// lock goes, and meanwhile the other rows' outcomes go on being applied. The fault's check:
// while the lock is held, `once` outcomes are seen applied at least every 5 s (the feeder
// keeps inserting one-shot rows, so there are always some to apply).
void FaultPlayer::row_lock_long(FaultRecord& r) {
    constexpr auto kLongestStall = 5s;
    try {
        const std::string ids = in_flight("once", 1);
        testing::MysqlClient db = cluster_.db();
        db.exec("START TRANSACTION");
        const auto held =
            db.column("SELECT id FROM chaos_once WHERE id IN (" + ids + ") FOR UPDATE");
        if (!held.empty()) {
            db.exec("UPDATE chaos_once SET touched = touched + 1 WHERE id = " + held.front());
        }
        // Plain reads from another session: they do not wait for the lock.
        testing::MysqlClient watch = cluster_.db();
        const auto applied = [&] {
            return watch.scalar("SELECT COUNT(*) FROM chaos_once WHERE n > 0");
        };
        const auto until = std::chrono::steady_clock::now() + r.fault.duration;
        auto last_change = std::chrono::steady_clock::now();
        auto longest = std::chrono::steady_clock::duration::zero();
        for (std::int64_t seen = applied(); std::chrono::steady_clock::now() < until;) {
            std::this_thread::sleep_for(100ms);
            const std::int64_t now = applied();
            const auto t = std::chrono::steady_clock::now();
            if (now != seen) {
                seen = now;
                last_change = t;
            }
            longest = std::max(longest, t - last_change);
        }
        db.exec("COMMIT");
        const double stall_s = std::chrono::duration<double>(longest).count();
        char text[160];
        std::snprintf(text, sizeof text, "%s, other outcomes stalled at most %.1f s",
                      held.empty() ? "no row in flight" : ("chaos_once id " + held.front()).c_str(),
                      stall_s);
        r.what = text;
        if (longest > kLongestStall) {
            r.problem = "row_lock_long: no outcome of another row applied for " +
                        std::to_string(static_cast<int>(stall_s)) + " s while one row was locked";
        }
    } catch (const std::exception& e) {
        r.problem = std::string("row_lock_long: ") + e.what();
    }
}

// The proxy between the dispatchers and Redis cuts the connection that carries the next reply
// to a push of the uuid queue (after Redis ran it). Its tasks are in the ready list: they
// must run once.
void FaultPlayer::push_reply_cut(FaultRecord& r) {
    cluster_.proxy().arm(kUuidPushReply);
    const bool cut = testing::eventually(
        30s, [&] { return cluster_.proxy().cut(); }, 10ms);
    r.what = cut ? "a push reply of the uuid queue" : "no push of the uuid queue in 30 s";
    if (!cut) cluster_.proxy().arm("");
}

}  // namespace rowpump::chaos
