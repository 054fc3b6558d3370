// Links rowpump::worker from an installed prefix and uses it without a Redis server: the
// Worker connects lazily, and bad options fail in the constructor.
#include <iostream>

#include "rowpump/worker.hpp"

int main() {
    rowpump::WorkerOptions options;
    options.queue = "user_block_check";
    options.worker_id = "package-test";
    rowpump::Worker worker(options);

    options.threads = 0;
    try {
        rowpump::Worker invalid(options);
        std::cerr << "threads = 0 was accepted\n";
        return 1;
    } catch (const rowpump::Error& e) {
        auto outcome = rowpump::Outcome::success({{"status", "1"}});
        std::cout << "worker_id=" << worker.worker_id() << " "
                  << (outcome.kind() == rowpump::Outcome::Kind::success ? "ok" : "bad") << "\n";
    }
    return 0;
}
