#pragma once

// The fair share across keys (group_by; docs/fairness.md): the keys of a queue's table, one
// page at a time in key order, visited in turn by the claims. Each claim takes its rows from
// the next keys of the ring, a share of its capacity each, so a key with a million due rows
// and a key with ten both have their rows started within a bound set by the number of keys,
// not by the big key's backlog. Pure logic: ClaimStore lists the keys and claims their rows.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/dispatcher/loop/claim.hpp"  // GroupKey

namespace rowpump {

// One key's part of a claim: up to `limit` rows, at or after `cursor` in order_by order
// (nullopt: from the key's first row).
struct KeyVisit {
    GroupKey key;
    std::int64_t limit = 0;
    std::optional<std::string> cursor;
};

// What a claim took of one key: how many rows, and the first order_by column of the last one.
struct KeyTaken {
    std::int64_t rows = 0;
    std::optional<std::string> last;
};

class KeyRing {
public:
    // Up to `page_size` keys listed at a time; up to `max_keys` keys visited by one claim.
    KeyRing(std::size_t page_size, std::size_t max_keys);

    // Whether the ring needs its next page of keys before it can go on: at the start, and
    // once a claim's visits reached the end of the page.
    bool wants_listing() const { return wants_listing_; }
    // The key the next page starts after; nullopt: from the first key.
    const std::optional<GroupKey>& listing_after() const { return listing_after_; }
    // The keys listed, in order. A page shorter than page_size is the last one: the page
    // after it starts from the first key again. Keeps the cursors and idle marks of keys
    // listed again.
    void listed(std::vector<GroupKey> keys);

    using TimePoint = std::chrono::steady_clock::time_point;

    // The next keys' visits for a claim of up to `rows` rows at `now`: up to max_keys keys from
    // where the last claim stopped, passing over keys idle until after `now` and keys
    // whose `allowance` (how many more of its tasks may be in flight) is 0; `rows` shared out
    // evenly, each visit cut to its allowance. Stops at the end of the page (wants_listing()).
    std::vector<KeyVisit> next(std::int64_t rows,
                               const std::function<std::int64_t(const GroupKey&)>& allowance,
                               TimePoint now);
    // What a claim may take of one key: `allowance` rows at most (its concurrency and rate
    // room), and its `weight` (its share of the claim against the other keys visited, 1 by
    // default).
    struct KeyShare {
        std::int64_t allowance = 0;
        std::int64_t weight = 1;
    };
    // next(), with weights: the keys visited until their weights add up to `rows` (or
    // max_keys of them), `rows` shared out in proportion to the weights. `share` returning
    // nullopt stops the visits before that key (not known yet: the next claim starts there).
    std::vector<KeyVisit> next_shares(
        std::int64_t rows, const std::function<std::optional<KeyShare>(const GroupKey&)>& share,
        TimePoint now);
    // The keys the next claim would consider (not idle, not held back by their rate at `now`),
    // up to `most`, from where the last claim stopped to the end of the page.
    std::vector<GroupKey> upcoming(std::size_t most, TimePoint now) const;
    // rate_per_key: `key` may take no row before `until` (its window on the Redis clock is
    // full): passed over until then, across listings, without a read.
    void hold_back(const GroupKey& key, TimePoint until);
    // When every key of the ring is held back at `now`: the time the first of them may take a
    // row again (a listing before then would find them all still held back); else nullopt.
    std::optional<TimePoint> all_held_until(TimePoint now) const;
    // What the claim of `visits` took, by key. A key that gave none is idle (passed over)
    // until `idle_until`, across listings; one that gave its whole limit goes on from its last
    // row next time (with `keep_cursors`), one that gave fewer starts from its first row again.
    void took(const std::vector<KeyVisit>& visits, const std::map<GroupKey, KeyTaken>& taken,
              bool keep_cursors, TimePoint idle_until);

    // When the page holds every key of the table (listed from the first key, and short): goes
    // round it again without listing it, and returns true. Listing costs an index dive and
    // a round trip per key: ClaimStore lists a whole-table ring at most once per poll.max.
    bool rewind();

    std::size_t size() const { return keys_.size(); }

private:
    struct Entry {
        GroupKey key;
        TimePoint idle_until{};  // passed over until then
        TimePoint held_until{};  // rate_per_key: passed over until then
        std::optional<std::string> cursor;
    };
    std::size_t page_size_, max_keys_;
    std::vector<Entry> keys_;
    std::map<GroupKey, std::size_t> index_;  // where each key of keys_ is
    std::size_t next_ = 0;                   // where the next claim's visits start
    bool wants_listing_ = true;
    bool whole_table_ = false;  // the page was listed from the first key and was the last
    std::optional<GroupKey> listing_after_;  // nullopt: from the first key
};

}  // namespace rowpump
