#include "verdict.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

namespace rowpump::chaos {

const FaultRecord* explain(const LedgerRun& run, const std::vector<FaultRecord>& faults) {
    for (const auto& f : faults) {
        if (f.taken.count(run.token) == 0) continue;
        switch (f.fault.kind) {
            case FaultKind::kill_worker:
            case FaultKind::restart_worker:
            case FaultKind::freeze_worker:
                if (run.pid == f.pid) return &f;
                break;
            case FaultKind::redis_restart_lost:
                return &f;
            default:
                break;
        }
    }
    return nullptr;
}

namespace {

std::vector<std::string> split_tokens(const std::string& claims) {
    std::vector<std::string> tokens;
    std::istringstream in(claims);
    std::string token;
    while (in >> token) tokens.push_back(token);
    return tokens;
}

}  // namespace

Judge::Judge(const Ledger& ledger, const std::vector<FaultRecord>& faults) : faults_(faults) {
    for (const auto& run : ledger.runs) runs_[run.queue + " " + run.id].push_back(&run);
    // Time order, whatever order the ledger came in: which run of a token counts as applied
    // (the earliest) does not depend on it.
    for (auto& [key, runs] : runs_) {
        std::sort(runs.begin(), runs.end(), [](const LedgerRun* a, const LedgerRun* b) {
            return std::tie(a->at, a->pid, a->token, a->outcome) <
                   std::tie(b->at, b->pid, b->token, b->outcome);
        });
    }
    verdict_.runs = static_cast<std::int64_t>(ledger.runs.size());
}

void Judge::row(const QueueInfo& q, const std::string& id, std::int64_t n,
                const std::string& claims, bool dead) {
    ++verdict_.rows;
    const std::string where = q.table + " id " + id;
    const bool must_fail = fails_on_purpose(q.queue, id);
    const std::int64_t expected = must_fail ? 0 : q.expected_runs;
    if (n < expected || dead != must_fail) {
        ++verdict_.lost;
        note(where + ": " + std::to_string(n) + " of " + std::to_string(expected) +
             " outcomes applied" + (dead ? ", dead" : "") +
             (must_fail && !dead ? ", not dead though its handler fails" : "") + " (lost)");
    } else if (n > expected) {
        ++verdict_.applied_twice;
        note(where + ": " + std::to_string(n) + " outcomes applied, " + std::to_string(expected) +
             " expected (applied twice)");
    }
    const std::vector<std::string> applied = split_tokens(claims);
    if (static_cast<std::int64_t>(applied.size()) != n) {
        ++verdict_.inconsistent;
        note(where + ": n = " + std::to_string(n) + " but claims '" + claims + "'");
    }
    auto it = runs_.find(q.queue + " " + id);
    std::vector<const LedgerRun*> runs;  // in time order (read_ledgers sorts them)
    if (it != runs_.end()) {
        runs = std::move(it->second);
        runs_.erase(it);
    }
    std::vector<bool> used(runs.size(), false);
    // Each applied token: the earliest success that ran it.
    for (const auto& token : applied) {
        bool found = false;
        for (std::size_t i = 0; i < runs.size() && !found; ++i) {
            if (!used[i] && runs[i]->token == token && runs[i]->outcome == "ok") {
                used[i] = found = true;
            }
        }
        if (!found) {
            ++verdict_.inconsistent;
            note(where + ": claim " + token + " applied but no handler ran it to success");
        }
    }
    // A retry was applied if a later attempt ran (each applied retry adds one); a fail if the
    // row is dead, the last one only. A token's first run only: a second run is extra.
    std::set<std::string> seen;
    std::optional<std::size_t> last_fail;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const LedgerRun& r = *runs[i];
        const bool first = seen.insert(r.token).second;
        if (!first || used[i]) continue;
        if (r.outcome == "retry") {
            const int attempt = token_attempt(r.token);
            for (std::size_t j = i + 1; j < runs.size() && !used[i]; ++j) {
                used[i] = token_attempt(runs[j]->token) > attempt;
            }
            used[i] = used[i] || dead;
            if (used[i]) ++verdict_.retries;
        } else if (r.outcome == "fail") {
            last_fail = i;
        }
    }
    if (dead && last_fail) {
        used[*last_fail] = true;
        ++verdict_.fails;
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (!used[i]) extra(*runs[i], where);
    }
}

Verdict Judge::finish(std::int64_t rows) {
    for (const auto& [key, runs] : runs_) {
        ++verdict_.inconsistent;
        note("ledger runs for " + key + ", which is no row of its table");
    }
    if (verdict_.rows != rows) {
        ++verdict_.inconsistent;
        note("the tables hold " + std::to_string(verdict_.rows) + " rows, " + std::to_string(rows) +
             " were inserted");
    }
    return verdict_;
}

void Judge::extra(const LedgerRun& run, const std::string& where) {
    ++verdict_.extra_runs;
    if (const FaultRecord* f = explain(run, faults_)) {
        ++verdict_.explained;
        ++verdict_.explained_by[kind_name(f->fault.kind)];
        return;
    }
    note(where + ": extra run (" + run.outcome + ") of claim " + run.token + " by pid " +
         std::to_string(run.pid) + " at " + std::to_string(run.at) +
         " µs: no fault took that task");
}

void Judge::note(const std::string& line) {
    if (verdict_.examples.size() < 20) verdict_.examples.push_back(line);
}

Verdict judge(testing::MysqlClient& db, const WorkloadShape& shape, const Ledger& ledger,
              const std::vector<FaultRecord>& faults) {
    Judge judge(ledger, faults);
    constexpr int kChunk = 100000;  // rows read per query, to bound memory
    for (const QueueInfo& q : queue_infos(shape)) {
        std::string after;  // the last id read
        bool first = true;
        for (bool more = true; more;) {
            const auto rows =
                db.rows("SELECT id, n, claims, rp_dead_at IS NOT NULL FROM " + q.table +
                        (first ? std::string() : " WHERE id > " + testing::sql_quote(after)) +
                        " ORDER BY id LIMIT " + std::to_string(kChunk));
            for (const testing::Row& r : rows) {
                after = r[0].value_or("");
                judge.row(q, after, std::stoll(r[1].value_or("0")), r[2].value_or(""),
                          r[3].value_or("0") == "1");
            }
            more = static_cast<int>(rows.size()) == kChunk;
            first = false;
        }
    }
    return judge.finish(shape.rows());
}

}  // namespace rowpump::chaos
