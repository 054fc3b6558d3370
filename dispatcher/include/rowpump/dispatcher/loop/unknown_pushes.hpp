#pragma once

// claim: mysql: pushes whose outcome is unknown. A push that fails once sent (the connection
// broke, or its reply made no sense) may have run in Redis: its reply alone was lost. Giving
// its claims back would let the rows be claimed and pushed a second time beside the tasks
// already waiting, and keeping them all until their lease ends would hold back rows that never
// reached Redis. So the claims are kept until Redis is reached again, and then Redis is asked
// (the held script) whether the batch's ready messages are held: in the ready list, a worker's
// processing list or the done list. The push script pushes a batch whole or not at all, so one
// message held means the batch landed; none held means it did not (or every task of it was
// finished already, whose rows no longer match the claim).

#include <string>
#include <vector>

#include "rowpump/dispatcher/loop/claim.hpp"
#include "rowpump/dispatcher/redis/redis_side.hpp"

namespace rowpump {

class UnknownPushes {
public:
    // The push of `claim` failed once sent.
    void add(const Claim& claim);
    bool any() const { return !claims_.empty(); }

    // What Redis says of each batch.
    struct Settled {
        std::vector<Claim> landed;      // held in Redis: their claims stay
        std::vector<Claim> not_landed;  // none of their messages held: to give back
    };
    // Asks Redis (one held call); forgets nothing, so that a caller whose release fails asks
    // again. Throws what RedisSide throws.
    Settled settle(RedisSide& redis) const;
    void clear() { claims_.clear(); }

private:
    std::vector<Claim> claims_;
};

}  // namespace rowpump
