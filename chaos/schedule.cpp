#include "schedule.hpp"

#include <algorithm>
#include <cstdio>
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
    }
    return "?";
}

namespace {

const std::vector<FaultKind> kAllKinds = {
    FaultKind::kill_worker,        FaultKind::freeze_worker, FaultKind::kill_leader,
    FaultKind::kill_standby,       FaultKind::freeze_leader, FaultKind::redis_restart_kept,
    FaultKind::redis_restart_lost, FaultKind::mysql_kill,    FaultKind::mysql_down,
    FaultKind::row_locks,          FaultKind::malformed};

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
        default:
            return 0ms;
    }
}

}  // namespace

std::vector<Fault> make_schedule(const ScheduleParams& p) {
    std::mt19937_64 rng(p.seed);
    std::vector<Fault> schedule;
    milliseconds cursor = 5s;  // a quiet start: the normal dispatch rate is seen first
    const milliseconds end = std::chrono::duration_cast<milliseconds>(p.run) - 5s;
    for (int round = 0;; ++round) {
        std::vector<FaultKind> kinds = kAllKinds;
        std::shuffle(kinds.begin(), kinds.end(), rng);
        for (FaultKind kind : kinds) {
            Fault f;
            f.kind = kind;
            f.duration = duration_of(kind, p, rng);
            f.target = std::uniform_int_distribution<int>(0, p.worker_slots - 1)(rng);
            // Room to recover before the next one: 3 to 5 s after the fault is over.
            f.at = cursor;
            const milliseconds next =
                f.at + f.duration +
                milliseconds(std::uniform_int_distribution<int>(3000, 5000)(rng));
            if (round > 0 && next > end) return schedule;
            schedule.push_back(f);
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
    if (f.kind == FaultKind::kill_worker || f.kind == FaultKind::freeze_worker) {
        what += " " + slot_names.at(static_cast<std::size_t>(f.target));
    }
    if (f.duration.count() > 0) {
        std::snprintf(line, sizeof line, "  +%6.1f s  %-28s for %.1f s", seconds(f.at),
                      what.c_str(), seconds(f.duration));
    } else {
        std::snprintf(line, sizeof line, "  +%6.1f s  %s", seconds(f.at), what.c_str());
    }
    return line;
}

}  // namespace rowpump::chaos
