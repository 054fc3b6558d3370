#pragma once

// The workers' ledgers: one line per handler run, `<queue> <id> <token> <pid> <unix µs>`,
// one file per worker process (see worker.cpp).

#include <sys/types.h>

#include <string>
#include <vector>

#include "workload.hpp"

namespace rowpump::chaos {

struct LedgerRun {
    std::string queue;
    std::string id;
    std::string token;
    pid_t pid = 0;
    Micros at = 0;
};

// Every run in every *.log file of `dir`. A line cut short (a worker killed inside write(2)
// cannot leave one, but a full disk could) is counted in `malformed`, not read.
struct Ledger {
    std::vector<LedgerRun> runs;
    std::size_t malformed = 0;
};
Ledger read_ledgers(const std::string& dir);

}  // namespace rowpump::chaos
