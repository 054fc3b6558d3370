#include "rowpump/dispatcher/loop/lease_keeper.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace rowpump {

namespace {

constexpr std::int64_t kPage = 2000;  // rows per look (SELECT, one script call, UPDATEs)
constexpr const char* kBeforeAnyLease = "1000-01-01 00:00:00.000";

}  // namespace

LeaseKeeper::LeaseKeeper(const QueueConfig& queue)
    : queue_(queue),
      window_(queue.lease / 2),
      interval_(lease_look_interval(queue)),
      horizon_(kBeforeAnyLease) {}

void LeaseKeeper::keep(ClaimStore& store, RedisSide& redis) {
    const auto started = Clock::now();
    if (started < next_) return;
    std::string after = kBeforeAnyLease;
    std::int64_t page_size = kPage, renewed = 0;
    const auto looked_before = looked_at_;
    // Read before the pages, whose own reach is at least this: nothing is left out.
    const std::string reach = store.clock_ahead(window_);
    while (keep_page(store, redis, after, page_size, renewed)) {
    }
    horizon_ = reach;
    // Counted from before the first read: a lease that was outside the window then ends at
    // least window_ after it.
    next_ = started + interval_;
    renewed_ += renewed;
    if (renewed > 0) redis.add_stats({{protocol::kStatRenewed, renewed}});
    if (looked_at_ > looked_before) {
        spdlog::debug("queue {}: renewed {} of {} leases running out (tasks still held) in {} ms",
                      queue_.label(), renewed, looked_at_ - looked_before,
                      std::chrono::duration_cast<Millis>(Clock::now() - started).count());
    }
}

bool LeaseKeeper::keep_page(ClaimStore& store, RedisSide& redis, std::string& after,
                            std::int64_t& page_size, std::int64_t& renewed) {
    auto rows = store.expiring(after, window_, page_size);
    const bool full = static_cast<std::int64_t>(rows.size()) == page_size;
    if (full) {
        // The next page starts after the last lease end of this one, so a page must not end
        // inside a group of rows with the same lease end (a claim batch has one).
        const std::string last = rows.back().lease_until;
        while (!rows.empty() && rows.back().lease_until == last) rows.pop_back();
        if (rows.empty()) {
            page_size *= 2;
            return true;
        }
    }
    if (rows.empty()) return false;

    std::unordered_map<std::string, const ClaimedRow*> by_message;
    std::vector<std::string> messages;
    messages.reserve(rows.size());
    for (const auto& r : rows) {
        messages.push_back(protocol::format_ready(r.row.id, r.row.token));
        by_message.emplace(messages.back(), &r.row);
    }
    std::vector<ClaimedRow> held;
    for (const auto& message : redis.held(messages)) {
        auto it = by_message.find(message);
        if (it != by_message.end()) held.push_back(*it->second);
    }
    if (!held.empty()) renewed += store.renew(held);
    looked_at_ += static_cast<std::int64_t>(rows.size());
    after = rows.back().lease_until;
    return full;
}

}  // namespace rowpump
