#pragma once

// Each fault kind, done to a running Cluster, and what the verdict needs to know about it
// afterwards: when it started and ended (on the ledger's clock) and which process it hit.

#include <sys/types.h>

#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "schedule.hpp"

namespace rowpump::chaos {

struct FaultRecord {
    Fault fault;
    Micros start = 0;
    Micros end = 0;  // the fault is over: process replaced or thawed, server back
    pid_t pid = 0;   // the process killed or frozen, if any
    // The tokens of the tasks the fault took: those in the killed or frozen worker's
    // processing list, or in any list of a Redis that lost its data. Only their runs can be
    // explained by it.
    std::set<std::string> taken;
    std::string what;     // "worker once-b16-2 (pid 123)", for the report
    std::string problem;  // non-empty: the fault's own check failed (malformed not set aside)
};

class FaultPlayer {
public:
    // `redis_epoch` is raised before every Redis restart that loses the data (the rate check
    // does not compare pushes across one).
    FaultPlayer(Cluster& cluster, std::atomic<int>& redis_epoch);

    // Plays the fault and returns when it is over. Kinds that plays_alongside() may be played
    // from another thread, beside one played from the main thread.
    FaultRecord play(const Fault& fault);

private:
    void kill_worker(FaultRecord& r, bool same_id);
    void freeze_worker(FaultRecord& r);
    void kill_dispatcher(FaultRecord& r, bool leader);
    void freeze_leader(FaultRecord& r);
    void redis_restart(FaultRecord& r, bool keep_data);
    void mysql_kill(FaultRecord& r);
    void mysql_down(FaultRecord& r);
    void row_locks(FaultRecord& r);
    void malformed(FaultRecord& r);
    void db_time_zone(FaultRecord& r);
    void row_lock_long(FaultRecord& r);
    void push_reply_cut(FaultRecord& r);

    std::string in_flight(const std::string& queue, int n);

    Cluster& cluster_;
    std::atomic<int>& redis_epoch_;
};

}  // namespace rowpump::chaos
