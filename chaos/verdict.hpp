#pragma once

// The verdict on the data: every row's applied outcomes (its `n` and the claim tokens its
// on_success appended) against its handler runs in the ledgers.
//
//   lost           a row with fewer applied outcomes than it needs (1, or `rounds`)
//   applied twice  a row with more
//   extra run      a handler run whose claim was never applied (or a second run of an
//                  applied claim); each must be explained by a fault of the schedule:
//                    kill_worker         a run by the killed process (before it died)
//                    freeze_worker       a run by the frozen process, from 10 s before the
//                                        freeze until 10 s after the thaw (its report came
//                                        too late, or its batch ran after the thaw)
//                    redis_restart_lost  any run from 60 s before the restart until 10 s after
//                                        (its task or its outcome was in a list that was lost)
//                  Nothing else explains a run: a dispatcher's death or freeze, MySQL outages,
//                  row locks and kept Redis data must not make any handler run again.

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
    Judge(const Ledger& ledger, const std::vector<FaultRecord>& faults);
    void row(const QueueInfo& q, const std::string& id, std::int64_t n, const std::string& claims);
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
