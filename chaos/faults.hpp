#pragma once

// Each fault kind, done to a running Cluster, and what the verdict needs to know about it
// afterwards: when it started and ended (on the ledger's clock) and which process it hit.

#include <sys/types.h>

#include <atomic>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "schedule.hpp"

namespace rowpump::chaos {

struct FaultRecord {
    Fault fault;
    Micros start = 0;
    Micros end = 0;       // the fault is over: process replaced or thawed, server back
    pid_t pid = 0;        // the process killed or frozen, if any
    std::string what;     // "worker once-b16-2 (pid 123)", for the report
    std::string problem;  // non-empty: the fault's own check failed (malformed not set aside)
};

class FaultPlayer {
public:
    // `redis_epoch` is raised before every Redis restart that loses the data (the rate check
    // does not compare pushes across one).
    FaultPlayer(Cluster& cluster, std::atomic<int>& redis_epoch);

    FaultRecord play(const Fault& fault);

private:
    void kill_worker(FaultRecord& r);
    void freeze_worker(FaultRecord& r);
    void kill_dispatcher(FaultRecord& r, bool leader);
    void freeze_leader(FaultRecord& r);
    void redis_restart(FaultRecord& r, bool keep_data);
    void mysql_kill(FaultRecord& r);
    void mysql_down(FaultRecord& r);
    void row_locks(FaultRecord& r);
    void malformed(FaultRecord& r);

    Cluster& cluster_;
    std::atomic<int>& redis_epoch_;
};

}  // namespace rowpump::chaos
