#pragma once

// How long each fault held dispatch back, from the one-shot queue's rows: the feeder notes when
// it inserted each chunk of rows, the ledgers when each row first ran. A chunk's latency is
// from its insert until its last row first ran. Normal is what the quiet start showed (the
// chunks that ran before the first fault began): twice their worst latency, at least 0.5 s.
//
//   flowing again  from the fault's start until the first chunk inserted after it began, and
//                  every chunk inserted in the second after that one, ran within the normal
//                  latency: new work is dispatched at the normal pace again
//   caught up      from the fault's start until every row inserted before the fault ended has
//                  run: the work the fault delayed (tasks lost with Redis, held by a frozen
//                  worker, waiting out a lease) is done too; 0 if all of it ran before the
//                  fault began

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "faults.hpp"
#include "ledger.hpp"

namespace rowpump::chaos {

struct Recovery {
    std::optional<double> flowing_s;  // nullopt: not by the end of the run
    std::optional<double> caught_up_s;
};

struct Recoveries {
    double normal_latency_s = 0;
    std::vector<Recovery> faults;  // in the order of the faults
};

Recoveries recovery_times(const std::vector<FaultRecord>& faults,
                          const std::vector<std::pair<Micros, std::int64_t>>& inserted,
                          const Ledger& ledger);

}  // namespace rowpump::chaos
