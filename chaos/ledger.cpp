#include "ledger.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

namespace rowpump::chaos {

int token_attempt(const std::string& token) {
    const auto first = token.find('-');
    const auto last = token.rfind('-');
    if (first == std::string::npos || last == first) return 0;
    try {
        return std::stoi(token.substr(first + 1, last - first - 1));
    } catch (const std::exception&) {
        return 0;
    }
}

Ledger read_ledgers(const std::string& dir) {
    Ledger ledger;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() == ".log") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<LedgerRun> ends;
    for (const auto& file : files) {
        std::ifstream in(file);
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            LedgerRun run;
            std::string rest;
            if (fields >> run.queue >> run.id >> run.token >> run.pid >> run.at >> run.outcome &&
                (run.outcome == "ok" || run.outcome == "retry" || run.outcome == "fail" ||
                 run.outcome == "end") &&
                !(fields >> rest)) {
                (run.outcome == "end" ? ends : ledger.runs).push_back(std::move(run));
            } else {
                ++ledger.malformed;
            }
        }
    }
    std::sort(ledger.runs.begin(), ledger.runs.end(), [](const LedgerRun& a, const LedgerRun& b) {
        return std::tie(a.queue, a.id, a.at, a.pid, a.token, a.outcome) <
               std::tie(b.queue, b.id, b.at, b.pid, b.token, b.outcome);
    });
    // Ends in time order, each to the earliest run of its pid and token still without one.
    std::map<std::tuple<std::string, std::string, pid_t, std::string>, std::vector<LedgerRun*>>
        open;
    for (auto& run : ledger.runs) open[{run.queue, run.id, run.pid, run.token}].push_back(&run);
    std::sort(ends.begin(), ends.end(),
              [](const LedgerRun& a, const LedgerRun& b) { return a.at < b.at; });
    for (const auto& end : ends) {
        LedgerRun* match = nullptr;
        auto it = open.find({end.queue, end.id, end.pid, end.token});
        if (it != open.end()) {
            for (LedgerRun* run : it->second) {
                if (run->ended == 0 && run->at <= end.at) {
                    match = run;
                    break;
                }
            }
        }
        if (match == nullptr) {
            ++ledger.malformed;
        } else {
            match->ended = end.at;
        }
    }
    return ledger;
}

}  // namespace rowpump::chaos
