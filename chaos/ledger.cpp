#include "ledger.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace rowpump::chaos {

Ledger read_ledgers(const std::string& dir) {
    Ledger ledger;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".log") continue;
        std::ifstream in(entry.path());
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            LedgerRun run;
            std::string rest;
            if (fields >> run.queue >> run.id >> run.token >> run.pid >> run.at &&
                !(fields >> rest)) {
                ledger.runs.push_back(std::move(run));
            } else {
                ++ledger.malformed;
            }
        }
    }
    return ledger;
}

}  // namespace rowpump::chaos
