#include "faults.hpp"

#include <signal.h>

#include <filesystem>
#include <thread>

#include "rowpump/common/protocol/keys.hpp"
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
            kill_worker(r);
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

}  // namespace

void FaultPlayer::kill_worker(FaultRecord& r) {
    WorkerSlot& slot = cluster_.workers().at(static_cast<std::size_t>(r.fault.target));
    r.pid = cluster_.replace_worker(slot);
    r.what = named(cluster_, r.pid);
}

void FaultPlayer::freeze_worker(FaultRecord& r) {
    WorkerSlot& slot = cluster_.workers().at(static_cast<std::size_t>(r.fault.target));
    r.pid = slot.process->pid();
    r.what = named(cluster_, r.pid);
    slot.process->signal(SIGSTOP);
    std::this_thread::sleep_for(r.fault.duration);
    slot.process->signal(SIGCONT);
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
        ++redis_epoch_;
        redis.kill();
        std::filesystem::remove(snapshot);  // an older restart's snapshot must not come back
        r.what = "Redis, data lost";
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

// An application transaction holds row locks: on periodic rows about to come due (claims
// must pass over them and take them once the lock goes) and on paced rows already dispatched
// (they wait in the ready list for the rate; their outcomes wait for the lock).
void FaultPlayer::row_locks(FaultRecord& r) {
    try {
        testing::MysqlClient db = cluster_.db();
        db.exec("START TRANSACTION");
        const auto soon = db.column(
            "SELECT id FROM chaos_periodic WHERE next_at > NOW(3) + INTERVAL 100000 MICROSECOND "
            "AND rounds_left > 0 ORDER BY next_at LIMIT 20 FOR UPDATE");
        const auto held = db.column(
            "SELECT id FROM chaos_paced WHERE done = 0 AND rp_token IS NOT NULL LIMIT 5 FOR "
            "UPDATE");
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
