// The chaos run's rules on made-up data: the verdict must catch a lost row, a row applied
// twice and an extra run no fault explains; the rate check must catch a full window; the
// schedule must hold every fault kind and repeat with its seed.

#include <catch2/catch.hpp>

#include <set>

#include "rate_watch.hpp"
#include "schedule.hpp"
#include "verdict.hpp"

using namespace rowpump::chaos;

namespace {

constexpr Micros kSecond = 1000000;
const QueueInfo kOnce{"once", "chaos_once", 1};
const QueueInfo kPeriodic{"periodic", "chaos_periodic", 3};

LedgerRun run(const std::string& id, const std::string& token, pid_t pid = 100, Micros at = 0) {
    return LedgerRun{"once", id, token, pid, at};
}

FaultRecord record(FaultKind kind, Micros start, Micros end, pid_t pid = 0) {
    FaultRecord r;
    r.fault.kind = kind;
    r.start = start;
    r.end = end;
    r.pid = pid;
    return r;
}

Verdict judge_one(const Ledger& ledger, const std::vector<FaultRecord>& faults, std::int64_t n,
                  const std::string& claims) {
    Judge judge(ledger, faults);
    judge.row(kOnce, "1", n, claims);
    return judge.finish(1);
}

}  // namespace

TEST_CASE("chaos verdict: one run, one applied outcome is clean", "[chaos]") {
    const Verdict v = judge_one(Ledger{{run("1", "A")}, 0}, {}, 1, "A ");
    CHECK(v.passed());
    CHECK(v.extra_runs == 0);
}

TEST_CASE("chaos verdict: a row short of its outcomes is lost, one over is applied twice",
          "[chaos]") {
    Judge judge(Ledger{{run("1", "A"), {"periodic", "2", "B", 100, 0}}, 0}, {});
    judge.row(kOnce, "1", 0, "");
    judge.row(kPeriodic, "2", 1, "B ");
    judge.row(kOnce, "3", 2, "C D ");
    const Verdict v = judge.finish(3);
    CHECK(v.lost == 2);
    CHECK(v.applied_twice == 1);
    CHECK(v.extra_runs == 1);    // the run of row 1 whose outcome never came
    CHECK(v.inconsistent == 2);  // C and D applied, no handler ran them
    CHECK(!v.passed());
}

TEST_CASE("chaos verdict: an extra run is explained only by a fault that could cause it",
          "[chaos]") {
    const Ledger ledger{{run("1", "A", 77, 10 * kSecond), run("1", "B", 88, 20 * kSecond)}, 0};
    // B applied; A's outcome never was.
    CHECK(!judge_one(ledger, {}, 1, "B ").passed());
    // The process that ran A was killed after it ran: explained.
    CHECK(
        judge_one(ledger, {record(FaultKind::kill_worker, 11 * kSecond, 11 * kSecond, 77)}, 1, "B ")
            .passed());
    // Killed before A's run (a pid cannot run after its death), or another process: not.
    CHECK(
        !judge_one(ledger, {record(FaultKind::kill_worker, 9 * kSecond, 9 * kSecond, 77)}, 1, "B ")
             .passed());
    CHECK(!judge_one(ledger, {record(FaultKind::kill_worker, 11 * kSecond, 11 * kSecond, 88)}, 1,
                     "B ")
               .passed());
    // A freeze of that process explains runs up to 10 s around it.
    CHECK(judge_one(ledger, {record(FaultKind::freeze_worker, 15 * kSecond, 19 * kSecond, 77)}, 1,
                    "B ")
              .passed());
    CHECK(!judge_one(ledger, {record(FaultKind::freeze_worker, 25 * kSecond, 29 * kSecond, 77)}, 1,
                     "B ")
               .passed());
    // Redis losing its lists explains any run shortly before it.
    CHECK(judge_one(ledger, {record(FaultKind::redis_restart_lost, 12 * kSecond, 12 * kSecond)}, 1,
                    "B ")
              .passed());
    CHECK(!judge_one(ledger, {record(FaultKind::redis_restart_lost, 80 * kSecond, 80 * kSecond)}, 1,
                     "B ")
               .passed());
    // Nothing a dispatcher, MySQL or kept Redis data suffers explains a handler run.
    for (FaultKind kind : {FaultKind::kill_leader, FaultKind::freeze_leader, FaultKind::mysql_down,
                           FaultKind::mysql_kill, FaultKind::redis_restart_kept}) {
        CHECK(!judge_one(ledger, {record(kind, 5 * kSecond, 30 * kSecond, 77)}, 1, "B ").passed());
    }
}

TEST_CASE("chaos verdict: the same claim run twice is an extra run", "[chaos]") {
    const Ledger ledger{{run("1", "A"), run("1", "A")}, 0};
    const Verdict v = judge_one(ledger, {}, 1, "A ");
    CHECK(v.extra_runs == 1);
    CHECK(!v.passed());
}

TEST_CASE("chaos rate: at most N rows from any push until a period after it", "[chaos]") {
    const auto period = std::chrono::microseconds(kSecond);
    // 2/1s: pushes at 0 and 1.0 s are fine, a third at 0.999 s is not.
    CHECK(judge_rate({{0, 0, 1}, {0, kSecond - 1, 1}, {0, kSecond, 1}}, 2, period).violations == 0);
    const RateVerdict v = judge_rate({{0, 0, 1}, {0, 500000, 1}, {0, 999999, 1}}, 2, period);
    CHECK(v.violations == 1);
    CHECK(v.worst == 3);
    // Rows count, not pushes.
    CHECK(judge_rate({{0, 0, 3}}, 2, period).violations == 1);
    // Pushes on either side of a Redis restart that lost the window are not compared.
    CHECK(judge_rate({{0, 0, 2}, {1, 1, 2}}, 2, period).violations == 0);
}

TEST_CASE("chaos schedule: every kind in the first round, the same for the same seed", "[chaos]") {
    ScheduleParams params;
    params.seed = 42;
    params.run = std::chrono::seconds(80);
    params.worker_slots = 5;
    const auto schedule = make_schedule(params);
    std::set<FaultKind> kinds;
    for (const auto& f : schedule) kinds.insert(f.kind);
    CHECK(kinds.size() == 11);
    for (std::size_t i = 1; i < schedule.size(); ++i) {
        CHECK(schedule[i].at >= schedule[i - 1].at + schedule[i - 1].duration);  // one at a time
    }
    const auto again = make_schedule(params);
    REQUIRE(again.size() == schedule.size());
    for (std::size_t i = 0; i < schedule.size(); ++i) {
        CHECK(again[i].at == schedule[i].at);
        CHECK(again[i].kind == schedule[i].kind);
    }
    params.seed = 43;
    const auto other = make_schedule(params);
    bool differs = other.size() != schedule.size();
    for (std::size_t i = 0; !differs && i < schedule.size(); ++i) {
        differs = other[i].kind != schedule[i].kind;
    }
    CHECK(differs);
}

TEST_CASE("chaos schedule: freezes and the MySQL outage outlast what they must", "[chaos]") {
    ScheduleParams params;
    params.run = std::chrono::seconds(600);
    params.worker_slots = 5;
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        params.seed = seed;
        for (const auto& f : make_schedule(params)) {
            if (f.kind == FaultKind::freeze_worker) CHECK(f.duration > params.heartbeat_ttl);
            if (f.kind == FaultKind::freeze_leader) {
                CHECK(f.duration > params.leader_timeout * 4 / 3);
            }
            if (f.kind == FaultKind::mysql_down) CHECK(f.duration > params.lease);
        }
    }
}
