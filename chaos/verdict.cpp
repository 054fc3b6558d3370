#include "verdict.hpp"

#include <algorithm>
#include <sstream>

namespace rowpump::chaos {

namespace {

constexpr Micros kSecond = 1000000;

}  // namespace

const FaultRecord* explain(const LedgerRun& run, const std::vector<FaultRecord>& faults) {
    for (const auto& f : faults) {
        switch (f.fault.kind) {
            case FaultKind::kill_worker:
                if (run.pid == f.pid && run.at <= f.start) return &f;
                break;
            case FaultKind::freeze_worker:
                if (run.pid == f.pid && run.at >= f.start - 10 * kSecond &&
                    run.at <= f.end + 10 * kSecond) {
                    return &f;
                }
                break;
            case FaultKind::redis_restart_lost:
                if (run.at >= f.start - 60 * kSecond && run.at <= f.end + 10 * kSecond) return &f;
                break;
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
    verdict_.runs = static_cast<std::int64_t>(ledger.runs.size());
}

void Judge::row(const QueueInfo& q, const std::string& id, std::int64_t n,
                const std::string& claims) {
    ++verdict_.rows;
    const std::string where = q.table + " id " + id;
    if (n < q.expected_runs) {
        ++verdict_.lost;
        note(where + ": " + std::to_string(n) + " of " + std::to_string(q.expected_runs) +
             " outcomes applied (lost)");
    } else if (n > q.expected_runs) {
        ++verdict_.applied_twice;
        note(where + ": " + std::to_string(n) + " outcomes applied, " +
             std::to_string(q.expected_runs) + " expected (applied twice)");
    }
    const std::vector<std::string> applied = split_tokens(claims);
    if (static_cast<std::int64_t>(applied.size()) != n) {
        ++verdict_.inconsistent;
        note(where + ": n = " + std::to_string(n) + " but claims '" + claims + "'");
    }
    auto it = runs_.find(q.queue + " " + id);
    std::vector<const LedgerRun*> runs;
    if (it != runs_.end()) {
        runs = std::move(it->second);
        runs_.erase(it);
    }
    for (const auto& token : applied) {
        auto run = std::find_if(runs.begin(), runs.end(), [&](const LedgerRun* r) {
            return r != nullptr && r->token == token;
        });
        if (run == runs.end()) {
            ++verdict_.inconsistent;
            note(where + ": claim " + token + " applied but no handler ran it");
        } else {
            *run = nullptr;  // the run this applied outcome came from
        }
    }
    for (const auto* run : runs) {
        if (run != nullptr) extra(*run, where);
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
    note(where + ": extra run of claim " + run.token + " by pid " + std::to_string(run.pid) +
         " at " + std::to_string(run.at) + " µs not explained by any fault");
}

void Judge::note(const std::string& line) {
    if (verdict_.examples.size() < 20) verdict_.examples.push_back(line);
}

Verdict judge(testing::MysqlClient& db, const WorkloadShape& shape, const Ledger& ledger,
              const std::vector<FaultRecord>& faults) {
    Judge judge(ledger, faults);
    constexpr std::int64_t kChunk = 100000;  // rows read per query, to bound memory
    for (const QueueInfo& q : queue_infos(shape)) {
        const std::int64_t max_id = db.scalar("SELECT COALESCE(MAX(id), 0) FROM " + q.table);
        for (std::int64_t first = 0; first <= max_id; first += kChunk) {
            for (const testing::Row& r :
                 db.rows("SELECT id, n, claims FROM " + q.table + " WHERE id > " +
                         std::to_string(first) + " AND id <= " + std::to_string(first + kChunk))) {
                judge.row(q, r[0].value_or(""), std::stoll(r[1].value_or("0")), r[2].value_or(""));
            }
        }
    }
    return judge.finish(shape.once_rows + shape.periodic_rows + shape.paced_rows);
}

}  // namespace rowpump::chaos
