#pragma once

// Where the runner applies outcomes (OutcomeStore in MySQL; a fake in unit tests).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"

namespace rowpump {

struct AppliedCounts {
    std::int64_t completed = 0;
    std::int64_t retried = 0;
    std::int64_t dead = 0;
    std::int64_t stale = 0;  // token no longer matched: the claim had expired or was taken back
    // Of those counted as completed, retried or dead: outcomes found applied already (a
    // dispatcher stopped after committing them, before acknowledging them in Redis).
    std::int64_t again = 0;
    // Positions (in the batch given to Outcomes::apply) of outcomes not applied because
    // another transaction held their row locked: not counted, to be tried again. Not added
    // up by +=, being positions in one batch.
    std::vector<std::size_t> locked;

    AppliedCounts& operator+=(const AppliedCounts& o);
};

class Outcomes {
public:
    virtual ~Outcomes() = default;
    // Applies outcomes in one transaction. Outcomes must be valid for the queue (see
    // protocol::value_problem). Retries and failures use the token's attempt. An outcome that
    // was applied before (its row holds the settled token of its claim) is counted as what it
    // was, not as stale, and changes nothing. An outcome whose row another transaction holds
    // locked is left out and listed in AppliedCounts::locked; the others apply without
    // waiting for that lock. Throws sql::SQLException.
    virtual AppliedCounts apply(const std::vector<protocol::Done>& outcomes) = 0;
};

}  // namespace rowpump
