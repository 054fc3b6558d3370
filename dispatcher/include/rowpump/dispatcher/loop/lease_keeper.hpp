#pragma once

// A task that waits is never written off (docs/semantics.md, "Semantics and guarantees"). A claim's
// lease starts when the row is claimed, but a task may wait in the ready list, or in the
// hands of a live worker, for longer than that. Before the dispatcher claims, the keeper
// looks at the claimed rows whose lease ends within half a lease, asks Redis which of them
// are still held (ready list, a listed worker's processing list, the done list), and renews
// those for a full lease. Only rows nobody holds any more (a lost Redis list, a plain
// consumer that popped the task and vanished) keep their lease end and come back by it.
//
// The looks are lease/8 apart on this host's clock, but leases end by the database's clock,
// which may jump (an NTP step of the database host). So a claim takes rows whose lease ran
// out only up to the lease end a look has covered (horizon()): after a jump, a held row
// whose lease suddenly looks ended waits for the next look, which renews it.
//
// A held row another transaction holds locked (an application's SELECT ... FOR UPDATE) is not
// renewed: the renewal would wait for the lock, and every renewal of its batch with it. Its
// lease may then end while the lock is held, which by itself frees nothing: a claim passes
// over a locked row too. But the lock may go before a later look renews the row, so the
// horizon stops just short of the earliest lease end of such a row: no claim takes it, and
// its task's outcome (which also waits for the lock) still applies. Until a look renews it,
// rows whose lease or retry delay ended after that one wait too.
//
// Cost: one indexed SELECT every lease/8 while rows are claimed, and one clock reading; Redis and
// UPDATE work only for rows whose lease is actually running out, that is for tasks waiting longer
// than half a lease. Holds no connection of its own: it runs on the claiming connection, just
// before a claim.

#include <cstdint>
#include <optional>
#include <string>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/pacing.hpp"
#include "rowpump/dispatcher/mysql/claim_store.hpp"
#include "rowpump/dispatcher/redis/redis_side.hpp"

namespace rowpump {

class LeaseKeeper {
public:
    explicit LeaseKeeper(const QueueConfig& queue);

    // Call right before every claim. When a lease/8 has passed since the last look (and on
    // the first call, so after every start and takeover), renews the leases of held rows
    // that end within lease/2. After a look every held row's lease ends more than lease/2
    // after it began, so a claim that starts within lease/2 of the last look never takes a
    // held row; later claims find a new look due first.
    void keep(ClaimStore& store, RedisSide& redis);
    // The last look's reach, a lease end on the database clock: every claimed row whose lease
    // ends by then was looked at, and renewed if held, so a claim may take those whose lease
    // ran out; rows claimed since end later. Before the first look, a time before any lease.
    // Just short of the lease end of a held row the look left alone because it was locked.
    const std::string& horizon() const { return horizon_; }

    // Totals since start, for logs and tests.
    std::int64_t looked_at() const { return looked_at_; }
    std::int64_t renewed() const { return renewed_; }

private:
    // One page of rows whose lease ends after `after`; returns false after the last page.
    bool keep_page(ClaimStore& store, RedisSide& redis, std::string& after, std::int64_t& page_size,
                   std::int64_t& renewed);

    const QueueConfig& queue_;
    Millis window_;
    Millis interval_;
    TimePoint next_{};
    std::string horizon_;
    std::optional<std::string> locked_lease_end_;  // the earliest, in the last look
    std::int64_t looked_at_ = 0;
    std::int64_t renewed_ = 0;
};

}  // namespace rowpump
