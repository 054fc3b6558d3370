#pragma once

// The fault schedule: drawn from a seed before anything starts, printed, then played in order.
// Faults come one after another with a pause between them, so each one's recovery can be
// timed on its own, except one pair per round played at once (an overlap: a fault on the
// database or on the dispatchers' Redis connection beside one on a process or on Redis). The
// first round has every kind once (kill_worker three times, once per worker language), in a
// random order; further rounds, while the run lasts, draw again.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rowpump::chaos {

enum class FaultKind {
    kill_worker,         // kill -9 of a worker process; a new one takes its slot
    freeze_worker,       // SIGSTOP of a worker past its heartbeat TTL, then SIGCONT
    kill_leader,         // kill -9 of the leading dispatcher; a new stand-by is started
    kill_standby,        // kill -9 of the stand-by dispatcher; a new one is started
    freeze_leader,       // SIGSTOP of the leader past leader_timeout, then SIGCONT
    redis_restart_kept,  // Redis SHUTDOWN SAVE and start: the data comes back
    redis_restart_lost,  // Redis kill -9 and start without data: every list is lost
    mysql_kill,          // MariaDB kill -9 and start at once (crash recovery)
    mysql_down,          // MariaDB stopped for longer than the lease, then started
    row_locks,           // an application transaction holds row locks on due rows
    malformed,           // garbage pushed into the done and ready lists
    restart_worker,      // kill -9 of a worker process, restarted at once under its own id
    db_time_zone,        // SET GLOBAL time_zone to another offset, then back
    row_lock_long,       // a row in flight locked by the application past the lock wait
    push_reply_cut,      // the reply to a push never reaches the dispatcher (a cut connection)
};

// Kinds that touch no process the driver started: they may be played from another thread,
// beside another fault.
bool plays_alongside(FaultKind kind);

std::string kind_name(FaultKind kind);
// The kind named `name` (kind_name's word), or nullopt.
std::optional<FaultKind> kind_named(const std::string& name);

struct Fault {
    std::chrono::milliseconds at{0};  // from the start of the run
    FaultKind kind = FaultKind::kill_worker;
    std::chrono::milliseconds duration{0};  // how long a freeze, an outage or a lock lasts
    int target = 0;                         // which worker slot (worker faults)
    // Played in the background, beside the next fault of the schedule (which starts at the
    // same time): an overlap.
    bool alongside = false;
};

struct ScheduleParams {
    std::uint64_t seed = 0;
    std::chrono::seconds run{60};  // faults are placed within this, after a quiet start
    int worker_slots = 1;
    // Each slot's worker language (0, 1, 2: C++, Python, Node.js); empty: one language. The
    // n-th worker fault of a kind hits a slot of language n mod 3, so every language is hit.
    std::vector<int> slot_language;
    std::chrono::milliseconds heartbeat_ttl{3000};
    std::chrono::milliseconds leader_timeout{3000};
    std::chrono::milliseconds lease{10000};
    std::chrono::milliseconds lock_wait{10000};  // the dispatcher's innodb_lock_wait_timeout
    std::vector<FaultKind> without;              // kinds left out of the schedule (--without)
};

// The first round always fits: the run is lengthened if needed (see schedule_end).
std::vector<Fault> make_schedule(const ScheduleParams& params);
// When the last fault of the schedule is over.
std::chrono::milliseconds schedule_end(const std::vector<Fault>& schedule);

// One line per fault: "  +12.3 s  freeze_worker  slot 2  for 5.0 s".
std::string describe(const Fault& fault, const std::vector<std::string>& slot_names);

}  // namespace rowpump::chaos
