#pragma once

// With claim: redis, the rows whose task is in Redis or in a worker's hands: ids with the token
// of their task and the end of its lease. The row itself records nothing until the outcome, so
// this is how the leader knows not to push a row again, and which outcomes are of tasks it
// issued (an outcome of any other token is stale: one forged, or of an older copy).
// The leader learns it from Redis when it takes over (every task held in a list), adds what
// it pushes, drops what it applied, and renews the lease of every task a Redis list still
// holds when it looks (every lease/8). A task no list holds (a plain consumer popped it, or
// Redis lost its data) is kept until its lease ends, as the row's lease keeps it in mysql
// mode; `extend` moves that end. Only then does its row come back.

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/dispatcher/loop/claim.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"

namespace rowpump {

class InFlight {
public:
    // Unknown until learn(): after a start, or when another dispatcher led.
    bool known() const { return known_; }
    void forget();
    // Adds every task held in Redis, as ready messages (`<id>:<token>`; others are ignored),
    // held until `lease_end`; a held task replaces another token of its row (the one Redis
    // holds is the newer). What was known already stays.
    void learn(const std::vector<std::string>& messages, TimePoint lease_end);

    void add(const std::vector<ClaimedRow>& rows, TimePoint lease_end);
    bool holds(const std::string& id) const { return tasks_.count(id) > 0; }
    // This very task is in flight: the dispatcher issued it and its outcome is not applied.
    bool issued(const Task& task) const;
    // The task's outcome is applied: its row may be pushed again.
    void finished(const Task& task);
    // An `extend` of the task: its lease ends no sooner than `lease_end`.
    void extend(const Task& task, TimePoint lease_end);
    // Drops the tasks whose push is not among `held` (ready messages): a push that failed once
    // sent and did not land.
    void drop_unless_held(const std::vector<std::string>& messages,
                          const std::vector<std::string>& held);

    // Every task, as ready messages, to ask Redis which it still holds.
    std::vector<std::string> messages() const;
    struct Audit {
        std::size_t dropped = 0;  // in no list, lease ended: their rows are claimable again
        std::size_t unheld = 0;   // in no list, lease running: kept until it ends
    };
    // The tasks among `held` (ready messages) or in `keep` get a lease ending at `lease_end`;
    // the others keep theirs, and those whose lease ended by `now` are dropped.
    Audit audit(const std::vector<std::string>& held, const std::vector<Task>& keep, TimePoint now,
                TimePoint lease_end);
    std::size_t size() const { return tasks_.size(); }

private:
    struct Entry {
        std::string token;
        TimePoint lease_end;
    };
    std::unordered_map<std::string, Entry> tasks_;  // by id
    bool known_ = false;
};

}  // namespace rowpump
