#pragma once

// Waking the dispatcher: a producer that has just committed a row that is due (inserted it,
// or updated it so that the queue's `due` condition holds) nudges the queue, and the leading
// dispatcher claims at once instead of waiting out its poll interval (`poll.min`, 50 ms by
// default). Without nudges nothing changes: the poll finds the row anyway. Nudges that come
// while the dispatcher is busy are answered together by its next claim.
//
//   rowpump::Nudger nudger(redis_address, "user_block_check");   // keeps a connection
//   db.execute("INSERT INTO ...");   // committed first: the claim must see the row
//   nudger.nudge();
//
// In any language: PUBLISH rowpump:{<queue>}:nudge 1 (docs/protocol.md).

#include <memory>
#include <string>

#include "rowpump/redis_address.hpp"
#include "rowpump/worker.hpp"

namespace rowpump {

class Nudger {
public:
    // Throws Error for a queue name that cannot be one; connects on the first nudge().
    Nudger(RedisAddress redis, const std::string& queue);
    ~Nudger();
    Nudger(Nudger&&) noexcept;
    Nudger& operator=(Nudger&&) noexcept;

    // One PUBLISH. Throws ConnectionError when Redis cannot be reached (the next call
    // reconnects); the row is claimed by the next poll all the same. Not thread-safe: one
    // Nudger per thread.
    void nudge();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The same for a single nudge: connects, publishes, disconnects.
void nudge(const RedisAddress& redis, const std::string& queue);

}  // namespace rowpump
