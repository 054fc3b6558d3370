#pragma once

// Rows claimed in MySQL, on their way to the ready list.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rowpump {

struct ClaimedRow {
    std::string id;
    std::string token;
    // How long the row had been due when the claim read it (the database clock's NOW(3) minus
    // the queue's due_since); nullopt without due_since, or with claim: redis.
    std::optional<std::chrono::microseconds> due_age = std::nullopt;
    // The values of the queue's payload columns, in its order; std::nullopt for NULL.
    std::vector<std::optional<std::string>> payload = {};
    // With group_by (claim: mysql): the row's key (nullopt inside: NULL), for the per-key
    // figures (KeyFigures); nullopt without group_by.
    std::optional<std::optional<std::string>> group_key = std::nullopt;
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
