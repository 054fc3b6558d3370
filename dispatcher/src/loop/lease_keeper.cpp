#include "rowpump/dispatcher/loop/lease_keeper.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <unordered_map>
#include <vector>

#include "rowpump/common/log_text.hpp"

namespace rowpump {

namespace {

constexpr std::int64_t kPage = 2000;  // rows per look (SELECT, one script call, UPDATEs)
constexpr const char* kBeforeAnyLease = "1000-01-01 00:00:00.000";

// The time one microsecond before `lease_end`, a DATETIME text as the connector returns it
// ("2026-11-26 12:26:51", "2026-11-26 12:26:51.012000"): a claim's `lease <= ?` then leaves
// that lease end out. A time before any lease when it does not read as one.
std::string just_before(const std::string& lease_end) {
    std::tm tm{};
    int read = 0;
    if (std::sscanf(lease_end.c_str(), "%d-%d-%d %d:%d:%d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &read) != 6) {
        return kBeforeAnyLease;
    }
    long micros = 0;  // the fraction's first six digits
    if (static_cast<std::size_t>(read) < lease_end.size() && lease_end[read] == '.') {
        long scale = 100000;
        for (std::size_t i = static_cast<std::size_t>(read) + 1;
             i < lease_end.size() && scale > 0 &&
             std::isdigit(static_cast<unsigned char>(lease_end[i]));
             ++i, scale /= 10)
            micros += (lease_end[i] - '0') * scale;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    std::time_t seconds = timegm(&tm);
    if (--micros < 0) {
        micros += 1000000;
        --seconds;
    }
    std::tm out{};
    gmtime_r(&seconds, &out);
    char text[48];
    std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d.%06ld", out.tm_year + 1900,
                  out.tm_mon + 1, out.tm_mday, out.tm_hour, out.tm_min, out.tm_sec, micros);
    return text;
}

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
    locked_lease_end_.reset();
    // Read before the pages, whose own reach is at least this: nothing is left out.
    const std::string reach = store.clock_ahead(window_);
    while (keep_page(store, redis, after, page_size, renewed)) {
    }
    // A held row left alone for a lock was not renewed: the horizon stops short of its lease
    // end, so that no claim takes it when the lock goes before a look renews it.
    horizon_ = locked_lease_end_ ? std::min(reach, just_before(*locked_lease_end_)) : reach;
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
    std::unordered_map<std::string, std::string> held_lease_end;  // by id
    std::vector<std::string> messages;
    messages.reserve(rows.size());
    for (const auto& r : rows) {
        messages.push_back(protocol::format_ready(r.row.id, r.row.token));
        by_message.emplace(messages.back(), &r.row);
        held_lease_end.emplace(r.row.id, r.lease_until);
    }
    std::vector<ClaimedRow> held;
    for (const auto& message : redis.held(messages)) {
        auto it = by_message.find(message);
        if (it != by_message.end()) held.push_back(*it->second);
    }
    if (!held.empty()) {
        const auto renewal = store.renew(held);
        renewed += renewal.renewed;
        for (const auto at : renewal.locked) {
            const auto& end = held_lease_end.at(held[at].id);
            if (!locked_lease_end_ || end < *locked_lease_end_) locked_lease_end_ = end;
            spdlog::debug(
                "queue {}: the lease of row {} was not renewed: another transaction holds the "
                "row locked; no claim takes it before a later look renews it",
                queue_.label(), log_text(held[at].id));
        }
    }
    looked_at_ += static_cast<std::int64_t>(rows.size());
    after = rows.back().lease_until;
    return full;
}

}  // namespace rowpump
