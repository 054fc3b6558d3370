#pragma once

// Rows claimed in MySQL, on their way to the ready list.

#include <string>
#include <vector>

namespace rowpump {

struct ClaimedRow {
    std::string id;
    std::string token;
};

// One batch: every row of it has the lease end lease_until and a token in [low, high).
struct Claim {
    std::string low, high;
    std::string lease_until;  // DATETIME(3) text, from the database clock
    std::vector<ClaimedRow> rows;
};

// A claimed row whose lease ends soon (QueueStore::expiring).
struct ExpiringRow {
    ClaimedRow row;
    std::string lease_until;  // DATETIME(3) text
};

}  // namespace rowpump
