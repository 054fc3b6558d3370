#include "loop/done_entries.hpp"

#include <cppconn/exception.h>

#include <algorithm>

#include "rowpump/common/log_text.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

AppliedCounts apply_isolating(Outcomes& store, std::vector<DoneEntry>& entries) {
    std::vector<protocol::Done> outcomes;
    outcomes.reserve(entries.size());
    for (const auto& entry : entries) {
        if (entry.accepted()) outcomes.push_back(*entry.done);
    }
    if (outcomes.empty()) return {};
    try {
        return store.apply(outcomes);
    } catch (const sql::SQLException& e) {
        if (!is_row_error(e)) throw;
    }
    AppliedCounts counts;
    for (auto& entry : entries) {
        if (!entry.accepted()) continue;
        try {
            counts += store.apply({*entry.done});
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
        if (!entry.set_aside()) continue;
        if (out.first++ == 0)
            out.second = log_text(entry.why_set_aside()) +
                         (entry.accepted() ? ", counted as a failed attempt" : "") +
                         " (message: " + log_text(entry.message) + ")";
    }
    return out;
}

bool any_accepted(const std::vector<DoneEntry>& entries) {
    return std::any_of(entries.begin(), entries.end(),
                       [](const DoneEntry& e) { return e.accepted(); });
}

}  // namespace rowpump
