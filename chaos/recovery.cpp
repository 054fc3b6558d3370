#include "recovery.hpp"

#include <algorithm>
#include <limits>

namespace rowpump::chaos {

namespace {

constexpr Micros kNever = std::numeric_limits<Micros>::max();
constexpr Micros kSecond = 1000000;

struct Chunk {
    Micros inserted = 0;
    Micros ran = 0;  // when its last row first ran; kNever if one never did
};

std::vector<Chunk> chunks_of(const std::vector<std::pair<Micros, std::int64_t>>& inserted,
                             const Ledger& ledger) {
    const std::int64_t rows = inserted.empty() ? 0 : inserted.back().second;
    std::vector<Micros> first_run(static_cast<std::size_t>(rows) + 1, kNever);
    for (const auto& run : ledger.runs) {
        if (run.queue != "once") continue;
        const std::int64_t id = std::stoll(run.id);
        if (id < 1 || id > rows) continue;
        auto& at = first_run[static_cast<std::size_t>(id)];
        at = std::min(at, run.at);
    }
    std::vector<Chunk> chunks;
    std::int64_t previous = 0;
    for (const auto& [at, cumulative] : inserted) {
        Chunk c{at, 0};
        for (std::int64_t id = previous + 1; id <= cumulative; ++id) {
            c.ran = std::max(c.ran, first_run[static_cast<std::size_t>(id)]);
        }
        previous = cumulative;
        chunks.push_back(c);
    }
    return chunks;
}

std::optional<double> seconds_between(Micros from, Micros to) {
    if (to == kNever) return std::nullopt;
    return static_cast<double>(to - from) / 1e6;
}

}  // namespace

Recoveries recovery_times(const std::vector<FaultRecord>& faults,
                          const std::vector<std::pair<Micros, std::int64_t>>& inserted,
                          const Ledger& ledger) {
    const std::vector<Chunk> chunks = chunks_of(inserted, ledger);
    Recoveries out;
    Micros worst_quiet = 0;
    const Micros quiet_end = faults.empty() ? kNever : faults.front().start;
    for (const auto& c : chunks) {
        if (c.ran < quiet_end) worst_quiet = std::max(worst_quiet, c.ran - c.inserted);
    }
    const Micros normal = std::max<Micros>(kSecond / 2, 2 * worst_quiet);
    out.normal_latency_s = static_cast<double>(normal) / 1e6;
    auto late = [&](const Chunk& c) { return c.ran == kNever || c.ran - c.inserted > normal; };

    for (const auto& f : faults) {
        Recovery r;
        for (std::size_t i = 0; i < chunks.size() && !r.flowing_s; ++i) {
            if (chunks[i].inserted < f.start || late(chunks[i])) continue;
            bool steady = true;
            for (std::size_t j = i + 1;
                 j < chunks.size() && chunks[j].inserted < chunks[i].inserted + kSecond; ++j) {
                steady = steady && !late(chunks[j]);
            }
            if (steady) r.flowing_s = seconds_between(f.start, chunks[i].ran);
        }
        Micros caught_up = f.start;  // nothing was waiting: caught up at once
        for (const auto& c : chunks) {
            if (c.inserted <= f.end) caught_up = std::max(caught_up, c.ran);
        }
        r.caught_up_s = seconds_between(f.start, caught_up);
        out.faults.push_back(r);
    }
    return out;
}

}  // namespace rowpump::chaos
