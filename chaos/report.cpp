#include "report.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>

namespace rowpump::chaos {

namespace {

// The machine's load average (1, 5, 15 minutes): recovery times depend on it.
std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    in >> one >> five >> fifteen;
    return one + " " + five + " " + fifteen;
}

}  // namespace

void print_schedule(std::uint64_t seed, std::int64_t tasks, const WorkloadShape& shape,
                    int run_seconds, const std::vector<Fault>& schedule,
                    const std::vector<std::string>& slot_names) {
    std::printf(
        "chaos: seed %llu (repeat with: scripts/chaos.sh --tasks %lld --seed %llu --claim %s)\n",
        static_cast<unsigned long long>(seed), static_cast<long long>(tasks),
        static_cast<unsigned long long>(seed), shape.claim.c_str());
    std::printf(
        "chaos: %lld tasks: %lld one-shot rows, %lld periodic rows x %d rounds, %lld paced rows "
        "(rate %d/1s), %lld uuid rows, %lld keyed rows (%d keys, concurrency_per_key %d, "
        "rate_per_key %s, claim: mysql); inserted over %d s; lease %lld s; claim: %s\n",
        static_cast<long long>(shape.tasks()), static_cast<long long>(shape.once_rows),
        static_cast<long long>(shape.periodic_rows), shape.rounds,
        static_cast<long long>(shape.paced_rows), shape.paced_per_second,
        static_cast<long long>(shape.uuid_rows), static_cast<long long>(shape.keyed_rows),
        kKeyedKeys, kKeyedConcurrency, keyed_rate_text(shape).c_str(), run_seconds,
        static_cast<long long>(shape.lease.count()), shape.claim.c_str());
    std::printf("chaos: load average at the start: %s\n", load_average().c_str());
    std::printf("chaos: schedule, %zu faults:\n", schedule.size());
    for (const auto& f : schedule) std::printf("%s\n", describe(f, slot_names).c_str());
    std::fflush(stdout);
}

void print_played(const FaultRecord& r) {
    std::printf("chaos: %-18s %s, %.1f s%s%s\n", kind_name(r.fault.kind).c_str(), r.what.c_str(),
                static_cast<double>(r.end - r.start) / 1e6, r.problem.empty() ? "" : ": ",
                r.problem.c_str());
    std::fflush(stdout);
}

void print_recoveries(const std::vector<FaultRecord>& faults, const Recoveries& recoveries) {
    std::printf(
        "chaos: recovery, seconds from each fault's start (normal: one-shot rows run within "
        "%.2f s of their insert):\n",
        recoveries.normal_latency_s);
    std::printf("  %-18s  %7s  %13s  %9s\n", "fault", "lasted", "flowing again", "caught up");
    auto text = [](const std::optional<double>& s) {
        char out[32] = "never";
        if (s) std::snprintf(out, sizeof out, "%.1f", *s);
        return std::string(out);
    };
    for (std::size_t i = 0; i < faults.size(); ++i) {
        const Recovery& r = recoveries.faults[i];
        std::printf("  %-18s  %7.1f  %13s  %9s\n", kind_name(faults[i].fault.kind).c_str(),
                    static_cast<double>(faults[i].end - faults[i].start) / 1e6,
                    text(r.flowing_s).c_str(), text(r.caught_up_s).c_str());
    }
}

void print_details(const Verdict& v, const RateVerdict& rate, const KeyLimitsVerdict& keys,
                   const WorkloadShape& shape) {
    std::printf("chaos: load average at the end: %s\n", load_average().c_str());
    std::printf("chaos: %lld handler runs for %lld rows; extra runs by cause:",
                static_cast<long long>(v.runs), static_cast<long long>(v.rows));
    for (const auto& [kind, count] : v.explained_by) {
        std::printf(" %s %lld", kind.c_str(), static_cast<long long>(count));
    }
    std::printf("%s\n", v.explained_by.empty() ? " none" : "");
    std::printf("chaos: attempts: %lld retries and %lld fails applied\n",
                static_cast<long long>(v.retries), static_cast<long long>(v.fails));
    std::printf(
        "chaos: rate %d/1s: %lld pushes of %lld rows seen (of %lld paced rows), at most %lld "
        "rows in one window\n",
        shape.paced_per_second, static_cast<long long>(rate.pushes),
        static_cast<long long>(rate.rows), static_cast<long long>(shape.paced_rows),
        static_cast<long long>(rate.worst));
    for (const auto& line : rate.examples) std::printf("chaos: problem: %s\n", line.c_str());
    const KeyConcurrencyVerdict& c = keys.concurrency;
    std::printf(
        "chaos: concurrency_per_key %lld: %lld keyed runs of %lld keys, at most %lld of one key "
        "at once (%lld with runs a fault took back; %lld starts above the limit explained), "
        "%lld runs without an end\n",
        static_cast<long long>(c.limit), static_cast<long long>(c.runs),
        static_cast<long long>(c.keys), static_cast<long long>(c.most),
        static_cast<long long>(c.most_with_taken), static_cast<long long>(c.explained),
        static_cast<long long>(c.unended));
    for (const auto& line : c.examples) std::printf("chaos: problem: %s\n", line.c_str());
    std::printf(
        "chaos: rate_per_key %lld/%lldms: %lld pushes of %lld rows seen (of %lld keyed rows) over "
        "%lld keys, at most %lld rows of one key in one window, %lld windows at the limit\n",
        static_cast<long long>(keys.rate_limit),
        static_cast<long long>(
            std::chrono::duration_cast<std::chrono::milliseconds>(keys.rate_period).count()),
        static_cast<long long>(keys.rate.pushes), static_cast<long long>(keys.rate.rows),
        static_cast<long long>(shape.keyed_rows), static_cast<long long>(keys.rate_keys),
        static_cast<long long>(keys.rate.worst), static_cast<long long>(keys.rate.full));
    for (const auto& line : keys.rate.examples) std::printf("chaos: problem: %s\n", line.c_str());
    for (const auto& line : keys.unrecorded.examples) {
        std::printf("chaos: problem: %s\n", line.c_str());
    }
    if (keys.rate_unreadable > 0) {
        std::printf(
            "chaos: rate_per_key: %lld reads of key_rate entries not in the script's form\n",
            static_cast<long long>(keys.rate_unreadable));
    }
    if (v.inconsistent > 0) {
        std::printf("chaos: %lld bookkeeping inconsistencies\n",
                    static_cast<long long>(v.inconsistent));
    }
    for (const auto& line : v.examples) std::printf("chaos: problem: %s\n", line.c_str());
}

void print_summary(std::uint64_t seed, std::int64_t tasks, const Verdict& v,
                   const RateVerdict& rate, const KeyLimitsVerdict& keys, double seconds) {
    std::printf(
        "chaos: seed %llu tasks %lld, lost %lld, applied twice %lld, extra runs %lld (explained "
        "%lld), rate violations %lld, key concurrency violations %lld, key rate violations "
        "%lld, finished in %.0f s\n",
        static_cast<unsigned long long>(seed), static_cast<long long>(tasks),
        static_cast<long long>(v.lost), static_cast<long long>(v.applied_twice),
        static_cast<long long>(v.extra_runs), static_cast<long long>(v.explained),
        static_cast<long long>(rate.violations),
        static_cast<long long>(keys.concurrency.violations),
        static_cast<long long>(keys.rate_violations()), seconds);
    std::fflush(stdout);
}

}  // namespace rowpump::chaos
