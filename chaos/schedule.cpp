#include "schedule.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>

namespace rowpump::chaos {

using std::chrono::milliseconds;
using namespace std::chrono_literals;

std::string kind_name(FaultKind kind) {
    switch (kind) {
        case FaultKind::kill_worker:
            return "kill_worker";
        case FaultKind::freeze_worker:
            return "freeze_worker";
        case FaultKind::kill_leader:
            return "kill_leader";
        case FaultKind::kill_standby:
            return "kill_standby";
        case FaultKind::freeze_leader:
            return "freeze_leader";
        case FaultKind::redis_restart_kept:
            return "redis_restart_kept";
        case FaultKind::redis_restart_lost:
            return "redis_restart_lost";
        case FaultKind::mysql_kill:
            return "mysql_kill";
        case FaultKind::mysql_down:
            return "mysql_down";
        case FaultKind::row_locks:
            return "row_locks";
        case FaultKind::malformed:
            return "malformed";
        case FaultKind::restart_worker:
            return "restart_worker";
        case FaultKind::db_time_zone:
            return "db_time_zone";
        case FaultKind::row_lock_long:
            return "row_lock_long";
        case FaultKind::push_reply_cut:
            return "push_reply_cut";
    }
    return "?";
}

std::optional<FaultKind> kind_named(const std::string& name) {
    for (int k = 0; k <= static_cast<int>(FaultKind::push_reply_cut); ++k) {
        if (kind_name(static_cast<FaultKind>(k)) == name) return static_cast<FaultKind>(k);
    }
    return std::nullopt;
}

bool plays_alongside(FaultKind kind) {
    return kind == FaultKind::row_locks || kind == FaultKind::db_time_zone ||
           kind == FaultKind::push_reply_cut;
}

namespace {

const std::vector<FaultKind> kAllKinds = {
    FaultKind::kill_worker,   FaultKind::kill_worker,        FaultKind::kill_worker,
    FaultKind::freeze_worker, FaultKind::kill_leader,        FaultKind::kill_standby,
    FaultKind::freeze_leader, FaultKind::redis_restart_kept, FaultKind::redis_restart_lost,
    FaultKind::mysql_kill,    FaultKind::mysql_down,         FaultKind::row_locks,
    FaultKind::malformed,     FaultKind::restart_worker,     FaultKind::db_time_zone,
    FaultKind::row_lock_long, FaultKind::push_reply_cut};

// An overlap: one of these beside one of those.
const std::vector<FaultKind> kBackground = {FaultKind::row_locks, FaultKind::db_time_zone,
                                            FaultKind::push_reply_cut};
const std::vector<FaultKind> kForeground = {
    FaultKind::kill_worker,       FaultKind::restart_worker, FaultKind::freeze_worker,
    FaultKind::kill_leader,       FaultKind::freeze_leader,  FaultKind::redis_restart_kept,
    FaultKind::redis_restart_lost};

bool hits_worker(FaultKind kind) {
    return kind == FaultKind::kill_worker || kind == FaultKind::restart_worker ||
           kind == FaultKind::freeze_worker;
}

// How long the fault lasts: freezes outlast what they must outlast (the heartbeat TTL, the
// leader timeout) by a random margin; the outage outlasts the lease.
milliseconds duration_of(FaultKind kind, const ScheduleParams& p, std::mt19937_64& rng) {
    auto between = [&](milliseconds low, milliseconds high) {
        return milliseconds(
            std::uniform_int_distribution<std::int64_t>(low.count(), high.count())(rng));
    };
    switch (kind) {
        case FaultKind::freeze_worker:
            return p.heartbeat_ttl + between(1s, 3s);
        case FaultKind::freeze_leader:
            return p.leader_timeout * 4 / 3 + between(1s, 3s);
        case FaultKind::mysql_down:
            return std::chrono::duration_cast<milliseconds>(p.lease) + between(1s, 3s);
        case FaultKind::row_locks:
            return between(2s, 5s);
        case FaultKind::db_time_zone:
            return between(3s, 6s);
        case FaultKind::row_lock_long:
            return p.lock_wait + between(2s, 5s);
        default:
            return 0ms;
    }
}

}  // namespace

std::vector<Fault> make_schedule(const ScheduleParams& p) {
    std::mt19937_64 rng(p.seed);
    std::vector<Fault> schedule;
    std::map<FaultKind, int> worker_faults;  // how many of each kind hit a worker so far
    auto draw = [&](FaultKind kind) {
        Fault f;
        f.kind = kind;
        f.duration = duration_of(kind, p, rng);
        f.target = std::uniform_int_distribution<int>(0, p.worker_slots - 1)(rng);
        if (hits_worker(kind) && !p.slot_language.empty()) {
            const int language = worker_faults[kind]++ % 3;
            std::vector<int> slots;
            for (int i = 0; i < static_cast<int>(p.slot_language.size()); ++i) {
                if (p.slot_language[static_cast<std::size_t>(i)] == language) slots.push_back(i);
            }
            if (!slots.empty()) {
                f.target =
                    slots[std::uniform_int_distribution<std::size_t>(0, slots.size() - 1)(rng)];
            }
        }
        return f;
    };
    auto left_out = [&](FaultKind kind) {
        return std::find(p.without.begin(), p.without.end(), kind) != p.without.end();
    };
    // The same draws whatever is left out (the rest of the schedule stays as the seed made
    // it); a pair with a kind left out is no overlap.
    auto pick = [&](const std::vector<FaultKind>& kinds) {
        return kinds[std::uniform_int_distribution<std::size_t>(0, kinds.size() - 1)(rng)];
    };
    milliseconds cursor = 5s;  // a quiet start: the normal dispatch rate is seen first
    const milliseconds end = std::chrono::duration_cast<milliseconds>(p.run) - 5s;
    for (int round = 0;; ++round) {
        std::vector<std::vector<Fault>> steps;  // one fault, or an overlapping pair
        std::vector<FaultKind> kinds = kAllKinds;
        std::shuffle(kinds.begin(), kinds.end(), rng);
        kinds.erase(
            std::remove_if(kinds.begin(), kinds.end(), [&](FaultKind k) { return left_out(k); }),
            kinds.end());
        for (FaultKind kind : kinds) steps.push_back({draw(kind)});
        Fault background = draw(pick(kBackground));
        background.alongside = true;
        const auto at = std::uniform_int_distribution<std::size_t>(0, steps.size())(rng);
        const Fault foreground = draw(pick(kForeground));
        if (!left_out(background.kind) && !left_out(foreground.kind)) {
            steps.insert(steps.begin() + static_cast<std::ptrdiff_t>(at), {background, foreground});
        }
        for (auto& step : steps) {
            milliseconds longest{0};
            for (auto& f : step) {
                f.at = cursor;
                longest = std::max(longest, f.duration);
            }
            // Room to recover before the next one: 3 to 5 s after the fault is over.
            const milliseconds next =
                cursor + longest +
                milliseconds(std::uniform_int_distribution<int>(3000, 5000)(rng));
            if (round > 0 && next > end) return schedule;
            schedule.insert(schedule.end(), step.begin(), step.end());
            cursor = next;
        }
    }
}

milliseconds schedule_end(const std::vector<Fault>& schedule) {
    milliseconds end{0};
    for (const auto& f : schedule) end = std::max(end, f.at + f.duration);
    return end;
}

std::string describe(const Fault& f, const std::vector<std::string>& slot_names) {
    auto seconds = [](std::chrono::milliseconds ms) {
        return std::chrono::duration<double>(ms).count();
    };
    char line[160];
    std::string what = kind_name(f.kind);
    if (hits_worker(f.kind)) what += " " + slot_names.at(static_cast<std::size_t>(f.target));
    if (f.alongside) what += " (beside the next)";
    if (f.duration.count() > 0) {
        std::snprintf(line, sizeof line, "  +%6.1f s  %-28s for %.1f s", seconds(f.at),
                      what.c_str(), seconds(f.duration));
    } else {
        std::snprintf(line, sizeof line, "  +%6.1f s  %s", seconds(f.at), what.c_str());
    }
    return line;
}

}  // namespace rowpump::chaos
