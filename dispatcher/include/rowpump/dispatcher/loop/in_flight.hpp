#pragma once

// With claim: redis, the rows whose task is in Redis: ids with the token of their task.
// The row itself records nothing until the outcome, so this is how the leader knows not to push
// a row again. The leader learns it from Redis when it takes over (every task held in a list),
// adds what it pushes, drops what it applied, and now and then drops tasks that no list holds
// any more (a Redis that lost its data, a malformed message set aside): their rows come back.

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "rowpump/common/protocol/protocol.hpp"
#include "rowpump/dispatcher/loop/claim.hpp"

namespace rowpump {

class InFlight {
public:
    // Unknown until load(): after a start, a change of leader or a Redis reconnect.
    bool known() const { return known_; }
    void forget();
    // Every task held in Redis, as ready messages (`<id>:<token>`); others are ignored.
    void load(const std::vector<std::string>& messages);

    void add(const std::vector<ClaimedRow>& rows);
    bool holds(const std::string& id) const { return tokens_.count(id) > 0; }
    // Another task of the same row is in flight: an outcome of this one is stale.
    bool stale(const Task& task) const;
    // The task's outcome is applied: its row may be pushed again.
    void finished(const Task& task);

    // Every task, as ready messages, to ask Redis which it still holds.
    std::vector<std::string> messages() const;
    // Drops the tasks not among `held` (ready messages) and not in `keep`: nothing can
    // report them any more. Returns how many were dropped.
    std::size_t keep_only(const std::vector<std::string>& held, const std::vector<Task>& keep);
    std::size_t size() const { return tokens_.size(); }

private:
    std::unordered_map<std::string, std::string> tokens_;  // id -> token
    bool known_ = false;
};

}  // namespace rowpump
