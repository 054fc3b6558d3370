#include "key_limits.hpp"

#include <algorithm>
#include <tuple>

#include "verdict.hpp"

namespace rowpump::chaos {

namespace {

// When a run with no end line stopped: the replacement of its process by a kill, if any.
Micros killed_at(const LedgerRun& run, const std::vector<FaultRecord>& faults) {
    for (const auto& f : faults) {
        if ((f.fault.kind == FaultKind::kill_worker || f.fault.kind == FaultKind::restart_worker) &&
            f.pid == run.pid && f.end >= run.at) {
            return f.end;
        }
    }
    return 0;
}

struct Event {
    Micros at;
    bool starts;  // ends sort first at the same microsecond: touching runs do not overlap
    const LedgerRun* run;
    bool taken;  // a fault took its task back (explain())
};

}  // namespace

KeyConcurrencyVerdict judge_concurrency_per_key(const std::vector<LedgerRun>& runs,
                                                const std::string& queue,
                                                std::string (*key_of)(const std::string&),
                                                std::int64_t limit,
                                                const std::vector<FaultRecord>& faults) {
    KeyConcurrencyVerdict v;
    v.limit = limit;
    Micros ledger_end = 0;
    for (const auto& run : runs) ledger_end = std::max({ledger_end, run.at, run.ended});
    std::map<std::string, std::vector<Event>> by_key;
    for (const auto& run : runs) {
        if (run.queue != queue) continue;
        ++v.runs;
        Micros end = run.ended;
        if (end == 0) end = killed_at(run, faults);
        if (end == 0) {
            ++v.unended;
            end = ledger_end;
        }
        const bool taken = explain(run, faults) != nullptr;
        auto& events = by_key[key_of(run.id)];
        events.push_back({run.at, true, &run, taken});
        events.push_back({end, false, &run, taken});
    }
    v.keys = static_cast<std::int64_t>(by_key.size());
    for (auto& [key, events] : by_key) {
        std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
            return std::tie(a.at, a.starts, a.run) < std::tie(b.at, b.starts, b.run);
        });
        std::int64_t all = 0;
        std::int64_t counted = 0;  // runs no fault took back
        for (const Event& e : events) {
            const std::int64_t step = e.starts ? 1 : -1;
            all += step;
            if (!e.taken) counted += step;
            if (!e.starts) continue;
            v.most = std::max(v.most, counted);
            v.most_with_taken = std::max(v.most_with_taken, all);
            if (counted > limit) {
                ++v.violations;
                if (v.examples.size() < 10) {
                    v.examples.push_back("key " + key + ": " + std::to_string(counted) +
                                         " handlers at once from " + std::to_string(e.at) +
                                         " µs (row " + e.run->id + ", claim " + e.run->token +
                                         ", pid " + std::to_string(e.run->pid) + "), limit " +
                                         std::to_string(limit));
                }
            } else if (all > limit) {
                ++v.explained;
            }
        }
    }
    return v;
}

RateVerdict judge_rate_per_key(const std::map<std::string, std::set<WindowPush>>& pushes,
                               std::int64_t limit, std::chrono::microseconds period) {
    RateVerdict all;
    for (const auto& [key, key_pushes] : pushes) {
        const RateVerdict v = judge_rate(key_pushes, limit, period);
        all.pushes += v.pushes;
        all.rows += v.rows;
        all.violations += v.violations;
        all.worst = std::max(all.worst, v.worst);
        all.full += v.full;
        for (const auto& line : v.examples) {
            if (all.examples.size() < 10) all.examples.push_back("key " + key + ": " + line);
        }
    }
    return all;
}

UnrecordedRows unrecorded_rows(const std::map<std::string, std::set<WindowPush>>& pushes,
                               const std::map<std::string, std::int64_t>& rows) {
    UnrecordedRows u;
    for (const auto& [key, has] : rows) {
        std::int64_t seen = 0;
        if (auto it = pushes.find(key); it != pushes.end()) {
            for (const WindowPush& push : it->second) seen += push.rows;
        }
        if (seen >= has) continue;
        ++u.keys;
        u.rows += has - seen;
        u.examples.push_back("key " + key + ": " + std::to_string(has) + " rows, its pushes " +
                             "recorded " + std::to_string(seen) + " (pushed without a record)");
    }
    return u;
}

}  // namespace rowpump::chaos
