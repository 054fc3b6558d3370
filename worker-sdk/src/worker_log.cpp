#include "worker_log.hpp"

#include <cstdio>

namespace rowpump::details {

void WorkerLog::line(const std::string& text) const noexcept {
    try {
        if (sink_) {
            sink_(text);
        } else {
            std::string out = "rowpump worker " + worker_id_ + ": " + text + "\n";
            std::fputs(out.c_str(), stderr);
        }
    } catch (...) {
        // A failing logger must not take the worker down.
    }
}

void WorkerLog::redis_failed(const std::exception& e) {
    if (!redis_down_.exchange(true)) {
        line(std::string("redis unavailable (") + e.what() + "); retrying");
    }
}

void WorkerLog::redis_ok() {
    if (redis_down_.load(std::memory_order_relaxed) && redis_down_.exchange(false)) {
        line("redis reachable again");
    }
}

}  // namespace rowpump::details
