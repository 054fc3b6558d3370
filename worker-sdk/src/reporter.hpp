#pragma once

// Reporting outcomes: the complete script moves each task's ready message out of this
// worker's processing list and pushes its done message, in one round trip for a batch.

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "rowpump/worker.hpp"
#include "session.hpp"
#include "worker_keys.hpp"
#include "worker_log.hpp"

namespace rowpump::details {

// A task whose handler has run, with the done message to send for it.
struct Report {
    Task task;
    std::string done;
};

// The complete script's ARGV: ready message, done message, ... in the order of `reports`.
std::vector<std::string> report_args(const std::vector<Report>& reports);
// "task '42'", or "3 tasks ('42', ...)" for log lines; `reports` must not be empty.
std::string tasks_text(const std::vector<Report>& reports);
// The log line for the reports the complete script refused because their tasks had been
// taken back, or "" when it accepted all of them.
std::string refused_text(const std::vector<Report>& reports, std::int64_t accepted);

class Reporter {
public:
    // Keeps references to everything it is given: they must outlive it.
    Reporter(const WorkerOptions& options, const WorkerKeys& keys, WorkerLog& log,
             const std::atomic<bool>& stop);

    // Reports in one round trip; returns how many were accepted (the others' tasks had been
    // taken back). Throws the session's errors.
    std::int64_t report(Session& s, const std::vector<Report>& reports);

    // The same, pipelined by hand ahead of another command: append_report sends it,
    // read_report reads its reply and logs refusals.
    void append_report(Session& s, const std::vector<Report>& reports) const;
    void read_report(Session& s, const std::vector<Report>& reports);

    // Reports, retrying while Redis is away, until Redis takes the reports or, once stop is
    // set, until the heartbeat TTL has passed since the first failure (the dispatcher takes
    // the tasks back then anyway). `maybe_sent`: an earlier attempt may have got through.
    void report_until_done(Session& s, const std::vector<Report>& reports, bool maybe_sent);

    // Reports the done list took so far, for the heartbeat's worker info.
    std::int64_t done() const noexcept { return done_.load(std::memory_order_relaxed); }

private:
    void log_refused(const std::vector<Report>& reports, std::int64_t accepted,
                     bool maybe_sent) const;

    const WorkerOptions& options_;
    const WorkerKeys& keys_;
    WorkerLog& log_;
    const std::atomic<bool>& stop_;
    std::atomic<std::int64_t> done_{0};
};

}  // namespace rowpump::details
