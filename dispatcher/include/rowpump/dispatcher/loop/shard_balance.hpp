#pragma once

// How the dispatchers of a queue with shards share its shards. Leader locks go first come,
// first served, so the first dispatcher to start leads every shard. A stand-by therefore
// offers itself for each shard (Keys::shard_standby, expiring after leader_timeout, so only
// live dispatchers are offered), and a leader whose process leads at least two shards more than
// the offering one's hands that shard over: it gives its lock up and does not ask for it again
// for two leader_timeouts, while the stand-by asks every third of one. One hand-over per process
// and queue at a time, so a process never gives away more than the balance needs; a stand-by
// that does not take the shard after all leaves it to the old leader again.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/common/duration.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"

namespace rowpump {

// "host:pid" of a leader id "host:pid:random" (leadership.hpp): the process behind it.
std::string process_of(const std::string& leader_id);

// Whether the leader `me` should hand its shard to `standby`, given who leads each shard of the
// queue now (empty: nobody).
bool should_hand_over(const std::vector<std::string>& leaders, const std::string& me,
                      const std::string& standby);

// Shared by the shard loops of one queue in one process.
class ShardBalance {
public:
    explicit ShardBalance(Millis leader_timeout) : pause_(2 * leader_timeout) {}

    // How long a loop that handed its shard over leaves it to the stand-by.
    Millis pause() const { return pause_; }
    // True for one caller per pause(): that loop may hand its shard over now.
    bool try_hand_over(TimePoint now);

private:
    Millis pause_;
    std::atomic<std::int64_t> last_ns_{0};  // steady clock of the last hand-over; 0: none
};

}  // namespace rowpump
