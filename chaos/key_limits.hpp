#pragma once

// The keyed queue's per-key limits, checked from the data: `concurrency_per_key` from the
// handlers' own ledger (each run's start and end line), `rate_per_key` from Redis's record of
// each key's pushes (KeyRateWatch, key_rate_watch.hpp), as the `rate` check does for the paced
// queue.
//
// Concurrency: for every key, at no moment may more than `limit` handlers of its rows run at
// once, not counting runs a fault took back while their handler may still run: a run that
// explain() (verdict.hpp) explains, by the rules it applies to extra runs (a killed or frozen
// worker's task in its processing list, a task a lossy Redis restart took). A run's interval
// is [its line, its end line]; one without an end line ends when a kill_worker or
// restart_worker fault replaced its process, or else (the process died some other way) at the
// end of the ledger, counted in `unended`. A run that starts at the very microsecond another
// ended does not overlap it.

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "faults.hpp"
#include "ledger.hpp"
#include "rate_watch.hpp"

namespace rowpump::chaos {

struct KeyConcurrencyVerdict {
    std::int64_t limit = 0;
    std::int64_t runs = 0;             // runs of the queue
    std::int64_t keys = 0;             // keys they belong to
    std::int64_t most = 0;             // most runs of one key at once, taken-back runs left out
    std::int64_t most_with_taken = 0;  // ... with them
    // Runs that started while `limit` runs of their key were running: `violations` when no
    // fault took back enough of those runs, `explained` otherwise.
    std::int64_t violations = 0;
    std::int64_t explained = 0;
    std::int64_t unended = 0;           // runs without an end line whose process no fault killed
    std::vector<std::string> examples;  // the first few violations, one line each
};

// `runs` of every queue (those of other queues are passed over); `key_of` a row id's key.
KeyConcurrencyVerdict judge_concurrency_per_key(const std::vector<LedgerRun>& runs,
                                                const std::string& queue,
                                                std::string (*key_of)(const std::string&),
                                                std::int64_t limit,
                                                const std::vector<FaultRecord>& faults);

// rate_per_key: judge_rate's rule for each key's pushes alone (pushes of different keys never
// share a window); violations and pushes summed, `worst` the fullest window of any key.
RateVerdict judge_rate_per_key(const std::map<std::string, std::set<WindowPush>>& pushes,
                               std::int64_t limit, std::chrono::microseconds period);

// Rows of each key (`rows`) whose pushes the record (`pushes`, judge_rate_per_key's) is short
// of: every row is pushed at least once, and each push of a key's rows is recorded with them,
// so a key whose pushes add up to fewer rows than it has was pushed without a record, which
// is a push its limit did not hold. One line per key short, in `examples`.
struct UnrecordedRows {
    std::int64_t keys = 0;  // keys short
    std::int64_t rows = 0;  // rows short, summed
    std::vector<std::string> examples;
};
UnrecordedRows unrecorded_rows(const std::map<std::string, std::set<WindowPush>>& pushes,
                               const std::map<std::string, std::int64_t>& rows);

// All the per-key checks of a run; the summary line counts the violations of each.
struct KeyLimitsVerdict {
    KeyConcurrencyVerdict concurrency;
    // rate_per_key: `rate_limit` rows per `rate_period` for each key, judged by
    // judge_rate_per_key on the pushes KeyRateWatch saw.
    std::int64_t rate_limit = 0;
    std::chrono::microseconds rate_period{0};
    std::int64_t rate_keys = 0;        // keys with pushes seen
    std::int64_t rate_unreadable = 0;  // key_rate entries read that were not the script's form
    RateVerdict rate;
    UnrecordedRows unrecorded;
    // Pushes over a key's limit, and keys pushed without a record: the key rate violations.
    std::int64_t rate_violations() const { return rate.violations + unrecorded.keys; }
    std::int64_t violations() const { return concurrency.violations + rate_violations(); }
};

}  // namespace rowpump::chaos
