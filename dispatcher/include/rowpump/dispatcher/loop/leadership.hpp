#pragma once

// Which dispatcher leads a queue, as this one sees it. The lock is a Redis key with an expiry
// (common/lua/lead.lua): the leader renews it with every push, and at the start of a cycle when
// no push did for half the timeout (renewal_due); a stand-by tries to take it every third of
// `leader_timeout`, so a leader that stops making progress is replaced within about 4/3 of it.
// Pushes and done-list trims are fenced by the key, so a leader that wakes up after losing it is
// refused before it writes anything.

#include <stdexcept>
#include <string>

#include "rowpump/common/duration.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"

namespace rowpump {

// A fenced write was refused: another dispatcher leads now. The cycle stops where it is.
class LeadershipLost : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Leadership {
public:
    // A fresh id for this dispatcher: "<host>:<pid>:<random>".
    Leadership(std::string queue, Millis timeout);

    const std::string& id() const { return id_; }
    Millis timeout() const { return timeout_; }
    // How often the leader renews and a stand-by asks.
    Millis renew_every() const { return timeout_ / 3; }
    bool leading() const { return leading_; }
    // Whether to run the lead script now: always while standing by; as leader, when the lock
    // was last renewed half a timeout ago or more (after a freeze, certainly). With sleeps
    // capped at renew_every(), a renewal then comes at most 5/6 of the timeout after the last.
    bool renewal_due(TimePoint now = Clock::now()) const;
    // A fenced push went through, which renewed the lock.
    void renewed(TimePoint now = Clock::now()) { renewed_at_ = now; }

    // Records who holds the lock now (the lead script's answer); logs every change at info.
    // Returns whether this dispatcher leads.
    bool update(const std::string& holder);
    // A fenced write was refused.
    void lost();
    // Gave the lock up for `to` (shard_balance.hpp).
    void handed_over(const std::string& to);

private:
    std::string queue_;
    Millis timeout_;
    std::string id_;
    std::string holder_;  // last seen; "" before the first look
    bool leading_ = false;
    TimePoint renewed_at_{};
};

}  // namespace rowpump
