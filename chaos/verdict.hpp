#pragma once

// The verdict on the data: every row's applied outcomes (its `n`, the claim tokens its
// on_success appended, whether it ended dead) against its handler runs in the ledgers.
//
//   lost           a row with fewer applied outcomes than it needs (1, or `rounds`; 0 for a
//                  row that fails on purpose, which must end dead), or dead when it should not be
//   applied twice  a row with more
//   applied run    a success whose token the row holds (its earliest run), a retry followed
//                  by a run of a later attempt (or by the row's death), the last fail of a row
//                  that ended dead
//   extra run      any other run (a second run of a token, a success never applied, a retry
//                  or fail that changed nothing); each must be explained by a fault of the
//                  schedule that took that very task:
//                    kill_worker, restart_worker  a run by the killed process of a task in its
//                                                 processing list when it was killed
//                    freeze_worker                a run by the frozen process of a task in its
//                                                 processing list while it was frozen
//                    redis_restart_lost           a run of a task any list held at the wipe
//                  Nothing else explains a run: a dispatcher's death or freeze, MySQL outages,
//                  time-zone steps, row locks, a cut push reply and kept Redis data must not
//                  make any handler run again.

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "faults.hpp"
#include "ledger.hpp"
#include "rowpump/testing/mysql_client.hpp"
#include "workload.hpp"

namespace rowpump::chaos {

struct Verdict {
    std::int64_t rows = 0;
    std::int64_t lost = 0;
    std::int64_t applied_twice = 0;
    std::int64_t runs = 0;
    std::int64_t extra_runs = 0;
    std::int64_t explained = 0;
    std::int64_t retries = 0;  // retry outcomes applied (planned ones, and take-backs' retries)
    std::int64_t fails = 0;    // fail outcomes applied: rows dead as planned
    std::map<std::string, std::int64_t> explained_by;  // fault kind -> extra runs it explains
    // Bookkeeping that must never happen: `n` not matching the tokens appended, an applied
    // token no handler ran, a ledger run for a row that does not exist.
    std::int64_t inconsistent = 0;
    std::vector<std::string> examples;  // the first few problems, one line each

    bool passed() const {
        return lost == 0 && applied_twice == 0 && explained == extra_runs && inconsistent == 0;
    }
};

// The fault of the schedule that explains an extra run, or nullptr.
const FaultRecord* explain(const LedgerRun& run, const std::vector<FaultRecord>& faults);

// Judges rows one at a time against the ledger's runs.
class Judge {
public:
    // Keeps references to both: they must outlive the Judge.
    Judge(const Ledger& ledger, const std::vector<FaultRecord>& faults);
    void row(const QueueInfo& q, const std::string& id, std::int64_t n, const std::string& claims,
             bool dead = false);
    // Ledger runs left over belong to no row; `rows` is how many rows were inserted.
    Verdict finish(std::int64_t rows);

private:
    void extra(const LedgerRun& run, const std::string& where);
    void note(const std::string& line);

    const std::vector<FaultRecord>& faults_;
    std::unordered_map<std::string, std::vector<const LedgerRun*>> runs_;
    Verdict verdict_;
};

// Every row of the workload's tables.
Verdict judge(testing::MysqlClient& db, const WorkloadShape& shape, const Ledger& ledger,
              const std::vector<FaultRecord>& faults);

}  // namespace rowpump::chaos
