#pragma once

// Rows that claims keep passing over because another transaction holds them locked. A claim
// skips such rows without a trace (FOR UPDATE SKIP LOCKED), so now and then, after a claim
// from the start of the order that took fewer rows than it could, a plain read lists the rows
// that are still claimable (QueueSql::passed_over). A row found by two looks in a row, at
// least `check_every` apart, has been locked all that time (or never let go for long enough
// for a claim to take it) and is reported once, until a look no longer finds it.
// The same for rows whose outcome waits for such a lock (DoneEntry::locked): a look is then
// the list of those rows in a cycle's outcomes.

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rowpump/common/duration.hpp"

namespace rowpump {

// How long a row must stay locked before it is reported, and how often at most a look runs.
inline constexpr Millis kLockedRowCheck{5000};

class LockedRowWatch {
public:
    using Clock = std::chrono::steady_clock;

    explicit LockedRowWatch(Millis check_every) : check_every_(check_every) {}

    // Whether a look is due: the first one at once, then at most one per check_every.
    bool look_due(Clock::time_point now) const {
        return !last_look_ || now - *last_look_ >= check_every_;
    }

    // Records a look that found `ids` claimable; returns the ids to report now.
    std::vector<std::string> looked(const std::vector<std::string>& ids, Clock::time_point now);

    Millis check_every() const { return check_every_; }

private:
    Millis check_every_;
    std::optional<Clock::time_point> last_look_;
    std::map<std::string, Clock::time_point> passed_over_since_;
    std::set<std::string> reported_;
};

}  // namespace rowpump
