#pragma once

// What the chaos run prints: the schedule first (with the seed, to repeat it), each fault as
// it is played, then the details behind the verdict, and last the one summary line.

#include <cstdint>
#include <string>
#include <vector>

#include "faults.hpp"
#include "key_limits.hpp"
#include "rate_watch.hpp"
#include "recovery.hpp"
#include "schedule.hpp"
#include "verdict.hpp"

namespace rowpump::chaos {

void print_schedule(std::uint64_t seed, std::int64_t tasks, const WorkloadShape& shape,
                    int run_seconds, const std::vector<Fault>& schedule,
                    const std::vector<std::string>& slot_names);
void print_played(const FaultRecord& record);
void print_recoveries(const std::vector<FaultRecord>& faults, const Recoveries& recoveries);
void print_details(const Verdict& verdict, const RateVerdict& rate, const KeyLimitsVerdict& keys,
                   const WorkloadShape& shape);
// `chaos: seed S tasks N, lost 0, applied twice 0, extra runs K (explained K), rate
// violations 0, key concurrency violations 0, key rate violations 0, finished in S s`
void print_summary(std::uint64_t seed, std::int64_t tasks, const Verdict& verdict,
                   const RateVerdict& rate, const KeyLimitsVerdict& keys, double seconds);

}  // namespace rowpump::chaos
