#pragma once

// The workers' ledgers: one line per handler run, `<queue> <id> <token> <pid> <unix µs>
// <outcome>` (ok, retry or fail), one file per worker process, written alike by the C++,
// Python and Node.js chaos workers (worker.cpp, chaos_worker.py, chaos-worker.js). The line
// is written when the handler starts its work. A handler that takes time (the keyed queue's,
// workload.hpp) writes a second line when it ends, `<queue> <id> <token> <pid> <unix µs> end`.

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
    std::string outcome = "ok";  // what the handler returned: ok, retry or fail
    Micros ended = 0;            // its `end` line's time; 0: none (instant, or the process died)
};

// The attempt a token names (`<16 hex>-<attempt>-<8 hex>`), 0 if it names none.
int token_attempt(const std::string& token);

// Every run in every *.log file of `dir`, sorted by queue, id, time, pid and token (the
// verdict's matching does not depend on the order files are listed in). A line cut short (a worker
// killed inside write(2) cannot leave one, but a full disk could) is counted in `malformed`, not
// read. Each `end` line goes to the run of its pid and token that started before it (the
// earliest one without an end); one that matches no run is malformed too.
struct Ledger {
    std::vector<LedgerRun> runs;
    std::size_t malformed = 0;
};
Ledger read_ledgers(const std::string& dir);

}  // namespace rowpump::chaos
