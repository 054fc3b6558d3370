#include "loop/done_entries.hpp"

#include <cppconn/exception.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "rowpump/common/log_text.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

AppliedCounts apply_isolating(Outcomes& store, std::vector<DoneEntry>& entries) {
    std::vector<protocol::Done> outcomes;
    std::vector<DoneEntry*> applied;  // the entry of each outcome
    outcomes.reserve(entries.size());
    for (auto& entry : entries) {
        entry.locked = false;
        if (!entry.accepted()) continue;
        outcomes.push_back(*entry.done);
        applied.push_back(&entry);
    }
    if (outcomes.empty()) return {};
    try {
        auto counts = store.apply(outcomes);
        for (const auto at : counts.locked) applied.at(at)->locked = true;
        return counts;
    } catch (const sql::SQLException& e) {
        if (!is_row_error(e)) throw;
    }
    AppliedCounts counts;
    for (auto& entry : entries) {
        if (!entry.accepted()) continue;
        try {
            const auto one = store.apply({*entry.done});
            entry.locked = !one.locked.empty();
            counts += one;
        } catch (const sql::SQLException& e) {
            if (!is_row_error(e)) throw;
            entry.error = describe(e);
        }
    }
    return counts;
}

std::pair<std::size_t, std::string> refusals(const std::vector<DoneEntry>& entries) {
    std::pair<std::size_t, std::string> out{0, ""};
    for (const auto& entry : entries) {
        if (!entry.set_aside() || entry.locked) continue;  // a locked one goes aside once applied
        if (out.first++ == 0)
            out.second = log_text(entry.why_set_aside()) +
                         (entry.accepted() ? ", counted as a failed attempt" : "") +
                         " (message: " + log_text(entry.message) + ")";
    }
    return out;
}

std::vector<std::string> locked_ids(const std::vector<DoneEntry>& entries) {
    std::vector<std::string> ids;
    for (const auto& entry : entries) {
        if (entry.locked) ids.push_back(entry.done->task.id);
    }
    return ids;
}

bool any_accepted(const std::vector<DoneEntry>& entries) {
    return std::any_of(entries.begin(), entries.end(),
                       [](const DoneEntry& e) { return e.accepted(); });
}

void log_acknowledged(const std::string& label, const AppliedCounts& counts,
                      const std::pair<std::size_t, std::string>& refused, std::int64_t locked,
                      const std::string& bad_list) {
    if (refused.first > 0) {
        spdlog::warn("queue {}: moved {} refused done messages to {}; first: {}", label,
                     refused.first, bad_list, refused.second);
    }
    if (counts.again > 0) {
        spdlog::info(
            "queue {}: {} outcomes had been applied already (a dispatcher stopped before "
            "acknowledging them); counted once",
            label, counts.again);
    }
    if (counts.stale > 0) {
        spdlog::info(
            "queue {}: ignored {} stale outcomes (their claim had expired or was taken back)",
            label, counts.stale);
    }
    if (counts.dead > 0)
        spdlog::warn("queue {}: {} rows are dead (see `rowpump dead`)", label, counts.dead);
    if (locked > 0) {
        spdlog::debug(
            "queue {}: {} outcomes wait for rows another transaction holds locked; put back in "
            "the done list",
            label, locked);
    }
}

}  // namespace rowpump
