#include "rowpump/dispatcher/loop/key_ring.hpp"

#include <algorithm>

namespace rowpump {

KeyRing::KeyRing(std::size_t page_size, std::size_t max_keys)
    : page_size_(std::max<std::size_t>(page_size, 1)),
      max_keys_(std::max<std::size_t>(max_keys, 1)) {}

void KeyRing::listed(std::vector<GroupKey> keys) {
    std::map<GroupKey, Entry> kept;
    for (auto& entry : keys_) {
        if (entry.cursor || entry.idle_until != TimePoint{} || entry.held_until != TimePoint{})
            kept.emplace(entry.key, std::move(entry));
    }
    const bool last_page = keys.size() < page_size_;
    whole_table_ = last_page && !listing_after_;
    keys_.clear();
    keys_.reserve(keys.size());
    for (auto& key : keys) {
        auto it = kept.find(key);
        keys_.push_back(it != kept.end() ? std::move(it->second)
                                         : Entry{std::move(key), {}, {}, {}});
    }
    index_.clear();
    for (std::size_t i = 0; i < keys_.size(); ++i) index_[keys_[i].key] = i;
    next_ = 0;
    wants_listing_ = false;
    if (last_page || keys_.empty()) {
        listing_after_.reset();
    } else {
        listing_after_ = keys_.back().key;
    }
}

bool KeyRing::rewind() {
    if (!whole_table_) return false;
    next_ = 0;
    wants_listing_ = false;
    return true;
}

std::vector<KeyVisit> KeyRing::next(std::int64_t rows,
                                    const std::function<std::int64_t(const GroupKey&)>& allowance,
                                    TimePoint now) {
    return next_shares(
        rows,
        [&allowance](const GroupKey& key) -> std::optional<KeyShare> {
            return KeyShare{allowance(key), 1};
        },
        now);
}

std::vector<KeyVisit> KeyRing::next_shares(
    std::int64_t rows, const std::function<std::optional<KeyShare>(const GroupKey&)>& share,
    TimePoint now) {
    std::vector<KeyVisit> visits;
    std::vector<KeyShare> shares;
    std::int64_t weights = 0;
    rows = std::max<std::int64_t>(rows, 0);
    while (visits.size() < max_keys_ && weights < rows && next_ < keys_.size()) {
        const auto& entry = keys_[next_];
        if (entry.idle_until > now || entry.held_until > now) {
            ++next_;
            continue;
        }
        const auto may = share(entry.key);
        if (!may) break;
        ++next_;
        if (may->allowance <= 0) continue;
        visits.push_back({entry.key, 0, entry.cursor});
        shares.push_back({may->allowance, std::max<std::int64_t>(may->weight, 1)});
        weights += shares.back().weight;
    }
    if (next_ >= keys_.size()) wants_listing_ = true;
    if (visits.empty()) return visits;
    // rows * weight / weights each, the rows left over one each in turn (largest remainder
    // would be fairer by a row; this is simpler and never gives a key more than its weight's
    // share plus one).
    std::int64_t given = 0;
    for (std::size_t i = 0; i < visits.size(); ++i) {
        visits[i].limit = rows * shares[i].weight / weights;
        given += visits[i].limit;
    }
    for (std::size_t i = 0; given < rows && i < visits.size(); ++i, ++given) ++visits[i].limit;
    for (std::size_t i = 0; i < visits.size(); ++i)
        visits[i].limit = std::min(visits[i].limit, shares[i].allowance);
    return visits;
}

std::vector<GroupKey> KeyRing::upcoming(std::size_t most, TimePoint now) const {
    std::vector<GroupKey> keys;
    for (std::size_t i = next_; i < keys_.size() && keys.size() < most; ++i) {
        if (keys_[i].idle_until > now || keys_[i].held_until > now) continue;
        keys.push_back(keys_[i].key);
    }
    return keys;
}

void KeyRing::hold_back(const GroupKey& key, TimePoint until) {
    auto it = index_.find(key);
    if (it != index_.end()) keys_[it->second].held_until = until;
}

std::optional<KeyRing::TimePoint> KeyRing::all_held_until(TimePoint now) const {
    if (keys_.empty()) return std::nullopt;
    TimePoint first = TimePoint::max();
    for (const auto& entry : keys_) {
        if (entry.held_until <= now) return std::nullopt;
        first = std::min(first, entry.held_until);
    }
    return first;
}

void KeyRing::took(const std::vector<KeyVisit>& visits, const std::map<GroupKey, KeyTaken>& taken,
                   bool keep_cursors, TimePoint idle_until) {
    std::map<GroupKey, const KeyVisit*> by_key;
    for (const auto& visit : visits) by_key[visit.key] = &visit;
    for (auto& entry : keys_) {
        auto visited = by_key.find(entry.key);
        if (visited == by_key.end()) continue;
        auto it = taken.find(entry.key);
        const std::int64_t rows = it == taken.end() ? 0 : it->second.rows;
        entry.idle_until = rows == 0 ? idle_until : TimePoint{};
        if (keep_cursors && rows > 0 && rows >= visited->second->limit) {
            entry.cursor = it->second.last;
        } else {
            entry.cursor.reset();
        }
    }
}

}  // namespace rowpump
