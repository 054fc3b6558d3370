#pragma once

// Picking lines out of a dispatcher log ("2026-11-23 12:29:34.843 warning queue users: ...").

#include <sstream>
#include <string>
#include <vector>

namespace rowpump::testing {

// The lines of `log` for which `keep(level, line)` is true; `level` is the line's third word.
template <typename Keep>
std::vector<std::string> log_lines(const std::string& log, Keep&& keep) {
    std::vector<std::string> out;
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string date, time, level;
        words >> date >> time >> level;
        if (keep(level, line)) out.push_back(line);
    }
    return out;
}

}  // namespace rowpump::testing
