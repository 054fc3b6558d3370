#pragma once

// What the leader knows per key of a queue with group_by (docs/fairness.md): the tasks it
// pushed per key, the tasks in flight per key where it counts them (concurrency_per_key), and
// how often a claim passed a key over at its limit. The queue's loop counts; the observer
// takes the top keys every due_count.interval and publishes them (protocol/key_gauges.hpp),
// and /metrics shows what was published last. Bounded: up to kKept keys are counted one by
// one, the others only in the total, so a table with a million keys costs no more than that.
// Unlike QueueMetrics' atomics it takes a mutex: the loop waits at most for one ranking of
// kKept keys (take_top, once per due_count.interval) or one copy of the top keys (a scrape).

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/common/protocol/key_gauges.hpp"

namespace rowpump {

class KeyFigures {
public:
    using Key = std::optional<std::string>;  // nullopt: NULL (GroupKey)
    static constexpr std::size_t kKept = 10000;
    // Keys still counted one by one after a publication: the top ones and the next best.
    static constexpr std::size_t kKeptAfterTop = 1000;

    // Tasks pushed, by key.
    void pushed(const std::map<Key, std::int64_t>& rows);
    // Every key's tasks in flight, from one count (keys not in it have none).
    void in_flight(const std::map<Key, std::int64_t>& counts);
    // Keys a claim passed over because they were at their limit.
    void passed_over(const std::vector<Key>& keys);

    // The top `n` keys (protocol::ranks_before) and every other key together; starts a new
    // interval (`recent` counts from 0 again) and forgets the lowest ranked keys beyond
    // kKeptAfterTop (their figures stay in `other`).
    protocol::KeyGauges take_top(std::size_t n);

    // What /metrics shows: the last top keys this process published or, when it does not
    // lead, read from Redis.
    void show(std::optional<protocol::KeyGauges> gauges);
    std::optional<protocol::KeyGauges> shown() const;

private:
    struct Entry {
        std::int64_t pushed = 0, recent = 0, passed_over = 0;
        std::optional<std::int64_t> in_flight;
    };
    Entry* entry(const Key& key);  // nullptr when the key is not counted and there is no room

    mutable std::mutex mutex_;
    std::map<Key, Entry> keys_;
    Entry all_;  // every key's figures added up, counted or not
    std::optional<protocol::KeyGauges> shown_;
};

}  // namespace rowpump
