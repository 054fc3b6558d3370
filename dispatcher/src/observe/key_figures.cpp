#include "rowpump/dispatcher/observe/key_figures.hpp"

#include <algorithm>

namespace rowpump {

KeyFigures::Entry* KeyFigures::entry(const Key& key) {
    auto it = keys_.find(key);
    if (it != keys_.end()) return &it->second;
    if (keys_.size() >= kKept) return nullptr;
    return &keys_[key];
}

void KeyFigures::pushed(const std::map<Key, std::int64_t>& rows) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [key, n] : rows) {
        all_.pushed += n;
        all_.recent += n;
        if (auto* e = entry(key)) {
            e->pushed += n;
            e->recent += n;
        }
    }
}

void KeyFigures::in_flight(const std::map<Key, std::int64_t>& counts) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [key, e] : keys_) e.in_flight = 0;
    all_.in_flight = 0;
    for (const auto& [key, n] : counts) {
        *all_.in_flight += n;
        if (auto* e = entry(key)) e->in_flight = n;
    }
}

void KeyFigures::passed_over(const std::vector<Key>& keys) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& key : keys) {
        ++all_.passed_over;
        if (auto* e = entry(key)) {
            ++e->passed_over;
            // A key seen first here has its in flight count from the claim's count.
            if (!e->in_flight && all_.in_flight) e->in_flight = 0;
        }
    }
}

protocol::KeyGauges KeyFigures::take_top(std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<protocol::KeyFigure> ranked;
    ranked.reserve(keys_.size());
    for (const auto& [key, e] : keys_)
        ranked.push_back({key, e.pushed, e.recent, e.passed_over, e.in_flight});
    std::sort(ranked.begin(), ranked.end(), protocol::ranks_before);
    protocol::KeyGauges g;
    g.other = {std::nullopt, all_.pushed, all_.recent, all_.passed_over, all_.in_flight};
    for (std::size_t i = 0; i < ranked.size() && i < n; ++i) {
        const auto& f = ranked[i];
        g.other.pushed -= f.pushed;
        g.other.recent -= f.recent;
        g.other.passed_over -= f.passed_over;
        if (g.other.in_flight) *g.other.in_flight -= f.in_flight.value_or(0);
        g.top.push_back(f);
    }
    for (std::size_t i = std::max(n, kKeptAfterTop); i < ranked.size(); ++i)
        keys_.erase(ranked[i].key);
    for (auto& [key, e] : keys_) e.recent = 0;
    all_.recent = 0;
    return g;
}

void KeyFigures::show(std::optional<protocol::KeyGauges> gauges) {
    std::lock_guard<std::mutex> lock(mutex_);
    shown_ = std::move(gauges);
}

std::optional<protocol::KeyGauges> KeyFigures::shown() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return shown_;
}

}  // namespace rowpump
