// The chaos run's rules on made-up data: the verdict must catch a lost row, a row applied
// twice and an extra run no fault explains (only a fault that took that very task does); the
// rate check must catch a full window, per queue and per key; the per-key concurrency check
// must catch more handlers of one key at once than the limit, except runs a fault took back; the
// schedule must hold every fault kind, overlaps and kills of every language, and repeat with its
// seed.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "key_limits.hpp"
#include "key_rate_watch.hpp"
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

FaultRecord record(FaultKind kind, Micros start, Micros end, pid_t pid = 0,
                   std::set<std::string> taken = {}) {
    FaultRecord r;
    r.fault.kind = kind;
    r.start = start;
    r.end = end;
    r.pid = pid;
    r.taken = std::move(taken);
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
    const Ledger ledger{{run("1", "A"), {"periodic", "2", "B", 100, 0}}, 0};
    const std::vector<FaultRecord> none;
    Judge judge(ledger, none);
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

TEST_CASE("chaos verdict: an extra run is explained only by a fault that took its task",
          "[chaos]") {
    const Ledger ledger{{run("1", "A", 77, 10 * kSecond), run("1", "B", 88, 20 * kSecond)}, 0};
    // B applied; A's outcome never was.
    CHECK(!judge_one(ledger, {}, 1, "B ").passed());
    // The process that ran A was killed holding A: explained.
    for (FaultKind kind : {FaultKind::kill_worker, FaultKind::restart_worker}) {
        CHECK(judge_one(ledger, {record(kind, 11 * kSecond, 11 * kSecond, 77, {"A"})}, 1, "B ")
                  .passed());
        // Killed holding other tasks (its report of A came through, say), or another process
        // killed holding A: not.
        CHECK(!judge_one(ledger, {record(kind, 11 * kSecond, 11 * kSecond, 77, {"C"})}, 1, "B ")
                   .passed());
        CHECK(!judge_one(ledger, {record(kind, 11 * kSecond, 11 * kSecond, 88, {"A"})}, 1, "B ")
                   .passed());
    }
    // A freeze of that process, with A in its hands while frozen.
    CHECK(judge_one(ledger,
                    {record(FaultKind::freeze_worker, 9 * kSecond, 14 * kSecond, 77, {"A"})}, 1,
                    "B ")
              .passed());
    CHECK(!judge_one(ledger, {record(FaultKind::freeze_worker, 9 * kSecond, 14 * kSecond, 77, {})},
                     1, "B ")
               .passed());
    // Redis losing its lists explains a run of a task they held at the wipe, by anyone, and
    // no other run whenever it was.
    CHECK(judge_one(
              ledger,
              {record(FaultKind::redis_restart_lost, 12 * kSecond, 12 * kSecond, 0, {"A", "X"})}, 1,
              "B ")
              .passed());
    CHECK(!judge_one(ledger,
                     {record(FaultKind::redis_restart_lost, 12 * kSecond, 12 * kSecond, 0, {"X"})},
                     1, "B ")
               .passed());
    // Nothing a dispatcher, MySQL, a time-zone step, a lock, a cut push reply or kept Redis
    // data suffers explains a handler run, even with the task named.
    for (FaultKind kind :
         {FaultKind::kill_leader, FaultKind::freeze_leader, FaultKind::mysql_down,
          FaultKind::mysql_kill, FaultKind::redis_restart_kept, FaultKind::db_time_zone,
          FaultKind::row_lock_long, FaultKind::push_reply_cut, FaultKind::row_locks}) {
        CHECK(!judge_one(ledger, {record(kind, 5 * kSecond, 30 * kSecond, 77, {"A"})}, 1, "B ")
                   .passed());
    }
}

TEST_CASE("chaos verdict: the ledger's order decides nothing", "[chaos]") {
    // The same runs listed in another order give the same verdict: the later run of a token
    // is the extra one, whichever file listed it first.
    const LedgerRun early = run("1", "A", 77, 10 * kSecond);
    const LedgerRun late = run("1", "A", 88, 20 * kSecond);
    const std::vector<FaultRecord> late_explained = {
        record(FaultKind::kill_worker, 21 * kSecond, 21 * kSecond, 88, {"A"})};
    CHECK(judge_one(Ledger{{early, late}, 0}, late_explained, 1, "A ").passed());
    CHECK(judge_one(Ledger{{late, early}, 0}, late_explained, 1, "A ").passed());
}

TEST_CASE("chaos verdict: planned retries and fails are applied attempts, not extra runs",
          "[chaos]") {
    // Row 7 retries on its first attempt, then succeeds on the second.
    const LedgerRun retry1{"once", "7", "0123456789ABCDEF-1-aaaaaaaa", 100, 1 * kSecond, "retry"};
    const LedgerRun ok2{"once", "7", "0123456789ABCDEF-2-bbbbbbbb", 100, 2 * kSecond, "ok"};
    {
        const Ledger ledger{{retry1, ok2}, 0};
        const std::vector<FaultRecord> none;
        Judge judge(ledger, none);
        judge.row(kOnce, "7", 1, ok2.token + " ");
        const Verdict v = judge.finish(1);
        CHECK(v.passed());
        CHECK(v.retries == 1);
        CHECK(v.extra_runs == 0);
    }
    // A retry no later attempt followed (its report lost, the row run again at the same
    // attempt): an extra run, unexplained without a fault that took it.
    const LedgerRun ok1{"once", "7", "0123456789ABCDEF-1-cccccccc", 100, 2 * kSecond, "ok"};
    {
        const Ledger ledger{{retry1, ok1}, 0};
        const std::vector<FaultRecord> none;
        Judge judge(ledger, none);
        judge.row(kOnce, "7", 1, ok1.token + " ");
        CHECK(!judge.finish(1).passed());
    }
    // Row 250 fails on purpose: dead with no outcome is right; alive, or done, is not.
    const LedgerRun fail1{"once", "250", "0123456789ABCDEF-1-dddddddd", 100, 1 * kSecond, "fail"};
    {
        const Ledger ledger{{fail1}, 0};
        const std::vector<FaultRecord> none;
        Judge judge(ledger, none);
        judge.row(kOnce, "250", 0, "", true);
        const Verdict v = judge.finish(1);
        CHECK(v.passed());
        CHECK(v.fails == 1);
    }
    {
        const Ledger ledger{{fail1}, 0};
        const std::vector<FaultRecord> none;
        Judge judge(ledger, none);
        judge.row(kOnce, "250", 0, "", false);
        CHECK(judge.finish(1).lost == 1);
    }
    // A row that should succeed and ended dead is lost.
    {
        const Ledger ledger{{run("1", "A")}, 0};
        const std::vector<FaultRecord> none;
        Judge judge(ledger, none);
        judge.row(kOnce, "1", 0, "", true);
        CHECK(judge.finish(1).lost == 1);
    }
    // Two fails of a row that died once: the earlier one is extra.
    const LedgerRun fail2{"once", "250", "0123456789ABCDEF-1-eeeeeeee", 101, 5 * kSecond, "fail"};
    {
        const Ledger ledger{{fail1, fail2}, 0};
        const std::vector<FaultRecord> none;
        Judge judge(ledger, none);
        judge.row(kOnce, "250", 0, "", true);
        const Verdict v = judge.finish(1);
        CHECK(v.extra_runs == 1);
        CHECK(!v.passed());
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

TEST_CASE("chaos rate per key: each key's window alone", "[chaos]") {
    const auto period = std::chrono::microseconds(kSecond);
    // 2/1s per key: two keys with two pushes each in one second are fine, a third of one is not.
    std::map<std::string, std::set<WindowPush>> pushes{{"a", {{0, 0, 1}, {0, 10, 1}}},
                                                       {"b", {{0, 5, 1}, {0, 15, 1}}}};
    CHECK(judge_rate_per_key(pushes, 2, period).violations == 0);
    pushes["b"].insert({0, 20, 1});
    const RateVerdict v = judge_rate_per_key(pushes, 2, period);
    CHECK(v.violations == 1);
    CHECK(v.worst == 3);
    CHECK(v.pushes == 5);
}

TEST_CASE("chaos rate: windows at the limit are counted", "[chaos]") {
    const auto period = std::chrono::microseconds(kSecond);
    // 3/1s: the window from 0 holds 3 (at the limit), from 0.5 s 2, from 1.6 s 1.
    const RateVerdict v = judge_rate({{0, 0, 1}, {0, 500000, 2}, {0, 1600000, 1}}, 3, period);
    CHECK(v.full == 1);
    CHECK(v.violations == 0);
    CHECK(v.worst == 3);
}

TEST_CASE("chaos rate per key: the key_rate hash's entries are each key's pushes", "[chaos]") {
    const auto period = std::chrono::microseconds(1400000);
    KeyPushes pushes;
    // "<until>:<rows>" per push, until = the push's server time + the period.
    CHECK(add_key_rate_field(pushes, 0, "=3", "1401000:2,1700000:1", period) == 0);
    REQUIRE(pushes.count("3") == 1);
    CHECK(pushes["3"].size() == 2);
    CHECK(pushes["3"].count({0, 1000, 2}) == 1);
    CHECK(pushes["3"].count({0, 300000, 1}) == 1);
    // The same entries read again (every 100 ms) are the same pushes.
    CHECK(add_key_rate_field(pushes, 0, "=3", "1700000:1,2500000:1", period) == 0);
    CHECK(pushes["3"].size() == 3);
    // A key's value goes in as it is; "null" is the NULL key.
    add_key_rate_field(pushes, 0, "=a:b,c", "1500000:1", period);
    add_key_rate_field(pushes, 0, "null", "1500000:1", period);
    CHECK(pushes.count("a:b,c") == 1);
    CHECK(pushes.count("(null)") == 1);
    // After a Redis restart that lost the data, the epoch tells the pushes apart.
    add_key_rate_field(pushes, 1, "=3", "1401000:2", period);
    CHECK(pushes["3"].count({1, 1000, 2}) == 1);
    // Entries of another form are skipped and counted; so is a field that names no key.
    KeyPushes other;
    CHECK(add_key_rate_field(other, 0, "=1", "x:1,1401000,1401000:,1401000:0,-5:1,,9:1", period) ==
          7);
    CHECK(add_key_rate_field(other, 0, "1", "1401000:1", period) == 1);
    CHECK(other.empty());
    // Fed to the judge: key 3 pushed 2 rows at 1 ms, 1 at 300 ms and 1 at 1.1 s; 3 per
    // 1.4 s holds, 2 does not (the window from 1 ms holds all 4 rows; from 300 ms, 2).
    KeyPushes key3{{"3", {}}};
    add_key_rate_field(key3, 0, "=3", "1401000:2,1700000:1,2500000:1", period);
    const RateVerdict ok = judge_rate_per_key(key3, 4, period);
    CHECK(ok.violations == 0);
    CHECK(ok.rows == 4);
    const RateVerdict three = judge_rate_per_key(key3, 3, period);
    CHECK(three.violations == 1);
    REQUIRE(three.examples.size() == 1);
    CHECK(three.examples[0] ==
          "key 3: 4 rows pushed within 1400000 µs from the push at 1000 µs (Redis server time), "
          "limit 3");
    CHECK(judge_rate_per_key(key3, 2, period).violations == 1);
    CHECK(judge_rate_per_key(key3, 1, period).violations == 2);
}

TEST_CASE("chaos rate per key: a key whose pushes recorded fewer rows than it has", "[chaos]") {
    // Key "0" has 4 rows and pushes of 3 + 2 recorded (one pushed again): fine. Key "1" has 4
    // and pushes of 3 recorded; key "2" has 2 and no push recorded (a dispatcher that does not
    // keep the record would leave every key so).
    const std::map<std::string, std::set<WindowPush>> pushes{{"0", {{0, 0, 3}, {1, 5, 2}}},
                                                             {"1", {{0, 0, 1}, {0, 9, 2}}}};
    const UnrecordedRows u = unrecorded_rows(pushes, {{"0", 4}, {"1", 4}, {"2", 2}});
    CHECK(u.keys == 2);
    CHECK(u.rows == 3);
    REQUIRE(u.examples.size() == 2);
    CHECK(u.examples[0] == "key 1: 4 rows, its pushes recorded 3 (pushed without a record)");
    CHECK(u.examples[1] == "key 2: 2 rows, its pushes recorded 0 (pushed without a record)");
    KeyLimitsVerdict keys;
    keys.unrecorded = u;
    CHECK(keys.rate_violations() == 2);
    CHECK(keys.violations() == 2);
    CHECK(unrecorded_rows(pushes, {{"0", 4}, {"1", 3}}).keys == 0);
}

TEST_CASE("chaos workload: the keyed queue's rate_per_key binds at bursts and keeps up",
          "[chaos]") {
    // (tasks, seconds): the CI run, the full run, and the sizes between.
    for (const auto& [tasks, seconds] : std::vector<std::pair<std::int64_t, int>>{
             {1000, 80}, {50000, 110}, {50000, 125}, {240000, 110}, {1000000, 333}}) {
        CAPTURE(tasks, seconds);
        const WorkloadShape shape = shape_for(tasks, seconds);
        const double between_ms =
            seconds * 1000.0 / static_cast<double>(shape.keyed_rows / kKeyedBurst);
        const double period_ms = static_cast<double>(shape.keyed_rate_period.count());
        constexpr int kPerBurst = kKeyedBurst / kKeyedKeys;
        // Each key's rate takes 1.5 times the rows it gets over the run: its rows keep up.
        CHECK(shape.keyed_rate_rows * between_ms >= 1.5 * kPerBurst * period_ms);
        // With bursts 1 s apart or more, a key's burst is more than its rate takes at once.
        if (between_ms >= 1000) CHECK(shape.keyed_rate_rows < kPerBurst);
        // The watch reads the hash every 100 ms, and the push script merges no entries of a
        // key whose limit is 16 rows or fewer.
        CHECK(period_ms >= 500);
        CHECK(period_ms <= 2000);  // the last burst's last row waits no longer
        CHECK(shape.keyed_rate_rows <= 16);
    }
    const WorkloadShape ci = shape_for(50000, 115);  // 41 bursts over 115 s: one per 2.8 s
    CHECK(keyed_rate_text(ci) == "3/1400ms");
}

namespace {

std::string key_of_id(const std::string& id) {
    return id.substr(0, 1);  // "a1" -> key "a"
}

LedgerRun span(const std::string& id, const std::string& token, Micros from, Micros to,
               pid_t pid = 100) {
    LedgerRun r{"keyed", id, token, pid, from};
    r.ended = to;
    return r;
}

KeyConcurrencyVerdict judge_keys(const std::vector<LedgerRun>& runs, std::int64_t limit,
                                 const std::vector<FaultRecord>& faults = {}) {
    return judge_concurrency_per_key(runs, "keyed", key_of_id, limit, faults);
}

}  // namespace

TEST_CASE("chaos concurrency per key: more handlers of one key at once than the limit", "[chaos]") {
    // Two of key a overlap, a third starts as the first ends (touching: no overlap); key b
    // runs beside them on its own limit.
    const std::vector<LedgerRun> runs{span("a1", "A", 0, 100), span("a2", "B", 50, 150),
                                      span("a3", "C", 100, 200), span("b1", "D", 0, 200),
                                      span("b2", "E", 10, 190)};
    KeyConcurrencyVerdict v = judge_keys(runs, 2);
    CHECK(v.violations == 0);
    CHECK(v.most == 2);
    CHECK(v.keys == 2);
    CHECK(v.runs == 5);
    // The same runs against a limit of 1: the second of each key at once is a violation.
    v = judge_keys(runs, 1);
    CHECK(v.violations == 3);  // a2 over a1, a3 over a2, b2 over b1
    CHECK(!v.examples.empty());
    // A third of key a inside the others: over a limit of 2.
    std::vector<LedgerRun> more = runs;
    more.push_back(span("a4", "F", 120, 130));
    CHECK(judge_keys(more, 2).violations == 1);
    // Runs of other queues are not counted.
    more.back().queue = "once";
    CHECK(judge_keys(more, 2).violations == 0);
}

TEST_CASE("chaos concurrency per key: a run a fault took back does not count", "[chaos]") {
    // A frozen worker (pid 77) held claim A of row a1 while frozen; its task was taken back
    // and run again (B) while its own handler went on after the thaw.
    const std::vector<LedgerRun> runs{span("a1", "A", 0, 5000, 77), span("a1", "B", 4000, 4100),
                                      span("a2", "C", 4050, 4150)};
    const auto freeze = record(FaultKind::freeze_worker, 100, 3900, 77, {"A"});
    KeyConcurrencyVerdict v = judge_keys(runs, 2, {freeze});
    CHECK(v.violations == 0);
    CHECK(v.explained == 1);
    CHECK(v.most == 2);
    CHECK(v.most_with_taken == 3);
    // Without the fault, or with a fault that took another task or hit another process: a
    // violation, as for extra runs.
    CHECK(judge_keys(runs, 2).violations == 1);
    CHECK(
        judge_keys(runs, 2, {record(FaultKind::freeze_worker, 100, 3900, 77, {"X"})}).violations ==
        1);
    CHECK(
        judge_keys(runs, 2, {record(FaultKind::freeze_worker, 100, 3900, 78, {"A"})}).violations ==
        1);
    // A leader's death explains nothing.
    CHECK(judge_keys(runs, 2, {record(FaultKind::kill_leader, 100, 3900, 77, {"A"})}).violations ==
          1);
}

TEST_CASE("chaos concurrency per key: a run without an end line", "[chaos]") {
    // Killed (pid 77, replaced at 1000): it ended then, and a run after it does not overlap.
    LedgerRun killed = span("a1", "A", 0, 0, 77);
    const std::vector<LedgerRun> runs{killed, span("a2", "B", 10, 20), span("a3", "C", 2000, 2100)};
    const auto kill = record(FaultKind::kill_worker, 900, 1000, 77, {"A"});
    KeyConcurrencyVerdict v = judge_keys(runs, 1, {kill});
    CHECK(v.unended == 0);
    CHECK(v.violations == 0);  // B overlaps A, which the kill took: explained
    CHECK(v.explained == 1);
    // No fault killed its process: it runs until the ledger's end, counted.
    v = judge_keys(runs, 1);
    CHECK(v.unended == 1);
    CHECK(v.violations == 2);  // B and C both start while A runs
}

TEST_CASE("chaos ledger: an end line closes its run", "[chaos]") {
    const std::string dir =
        std::filesystem::temp_directory_path() / ("chaos-ledger-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    {
        std::ofstream out(dir + "/w.log");
        out << "keyed 1 A 7 100 ok\n"
            << "keyed 1 A 7 250 end\n"
            << "keyed 2 B 7 120 ok\n"
            << "keyed 3 C 7 300 end\n";  // no run of C: malformed
    }
    const Ledger ledger = read_ledgers(dir);
    std::filesystem::remove_all(dir);
    REQUIRE(ledger.runs.size() == 2);
    CHECK(ledger.runs[0].ended == 250);
    CHECK(ledger.runs[1].ended == 0);
    CHECK(ledger.malformed == 1);
}

TEST_CASE("chaos schedule: every kind in the first round, the same for the same seed", "[chaos]") {
    ScheduleParams params;
    params.seed = 42;
    params.run = std::chrono::seconds(80);
    params.worker_slots = 6;
    params.slot_language = {0, 0, 1, 1, 2, 2};
    const auto schedule = make_schedule(params);
    std::set<FaultKind> kinds;
    std::set<int> killed_languages;
    int overlaps = 0;
    for (const auto& f : schedule) {
        kinds.insert(f.kind);
        if (f.kind == FaultKind::kill_worker) killed_languages.insert(f.target / 2);
    }
    CHECK(kinds.size() == 15);
    CHECK(killed_languages.size() == 3);  // kills hit every language
    for (std::size_t i = 1; i < schedule.size(); ++i) {
        if (schedule[i - 1].alongside) {
            // An overlap: a fault that may be played from another thread, beside the next.
            ++overlaps;
            CHECK(plays_alongside(schedule[i - 1].kind));
            CHECK(schedule[i].at == schedule[i - 1].at);
            CHECK(!schedule[i].alongside);
        } else if (i >= 2 && schedule[i - 2].alongside) {
            const auto end = std::max(schedule[i - 2].at + schedule[i - 2].duration,
                                      schedule[i - 1].at + schedule[i - 1].duration);
            CHECK(schedule[i].at >= end);
        } else {
            CHECK(schedule[i].at >=
                  schedule[i - 1].at + schedule[i - 1].duration);  // one at a time
        }
    }
    CHECK(overlaps >= 1);
    const auto again = make_schedule(params);
    REQUIRE(again.size() == schedule.size());
    for (std::size_t i = 0; i < schedule.size(); ++i) {
        CHECK(again[i].at == schedule[i].at);
        CHECK(again[i].kind == schedule[i].kind);
    }
    auto without = params;
    without.without = {FaultKind::row_lock_long, FaultKind::restart_worker};
    for (const auto& f : make_schedule(without)) {
        CHECK(f.kind != FaultKind::row_lock_long);
        CHECK(f.kind != FaultKind::restart_worker);
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
    std::map<FaultKind, int> seen;
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        params.seed = seed;
        for (const auto& f : make_schedule(params)) {
            ++seen[f.kind];
            if (f.kind == FaultKind::freeze_worker) CHECK(f.duration > params.heartbeat_ttl);
            if (f.kind == FaultKind::freeze_leader) {
                CHECK(f.duration > params.leader_timeout * 4 / 3);
            }
            if (f.kind == FaultKind::mysql_down) CHECK(f.duration > params.lease);
            if (f.kind == FaultKind::row_lock_long) CHECK(f.duration > params.lock_wait);
        }
    }
    // Each rule above was checked at least once.
    for (const auto kind : {FaultKind::freeze_worker, FaultKind::freeze_leader,
                            FaultKind::mysql_down, FaultKind::row_lock_long}) {
        CHECK(seen[kind] > 0);
    }
}
