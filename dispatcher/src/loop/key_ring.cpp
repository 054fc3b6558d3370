#include "rowpump/dispatcher/loop/key_ring.hpp"

#include <algorithm>

namespace rowpump {

KeyRing::KeyRing(std::size_t page_size, std::size_t max_keys)
    : page_size_(std::max<std::size_t>(page_size, 1)),
      max_keys_(std::max<std::size_t>(max_keys, 1)) {}

void KeyRing::listed(std::vector<GroupKey> keys) {
    std::map<GroupKey, Entry> kept;
    for (auto& entry : keys_) {
        if (entry.cursor || entry.idle_until != TimePoint{})
            kept.emplace(entry.key, std::move(entry));
    }
    const bool last_page = keys.size() < page_size_;
    whole_table_ = last_page && !listing_after_;
    keys_.clear();
    keys_.reserve(keys.size());
    for (auto& key : keys) {
        auto it = kept.find(key);
        keys_.push_back(it != kept.end() ? std::move(it->second) : Entry{std::move(key), {}, {}});
    }
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
    std::vector<KeyVisit> visits;
    std::vector<std::int64_t> allowed;
    const auto most =
        std::min<std::size_t>(max_keys_, static_cast<std::size_t>(std::max<std::int64_t>(rows, 0)));
    while (visits.size() < most && next_ < keys_.size()) {
        const auto& entry = keys_[next_++];
        if (entry.idle_until > now) continue;
        const auto may = allowance(entry.key);
        if (may <= 0) continue;
        visits.push_back({entry.key, 0, entry.cursor});
        allowed.push_back(may);
    }
    if (next_ >= keys_.size()) wants_listing_ = true;
    if (visits.empty()) return visits;
    const auto n = static_cast<std::int64_t>(visits.size());
    for (std::int64_t i = 0; i < n; ++i) {
        const auto share = rows / n + (i < rows % n ? 1 : 0);
        visits[static_cast<std::size_t>(i)].limit =
            std::min(share, allowed[static_cast<std::size_t>(i)]);
    }
    return visits;
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
