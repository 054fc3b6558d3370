#pragma once

// In-process SDK workers for end-to-end tests. Header-only: rowpump_testing does not
// link the worker SDK, the integration tests do.

#include <string>

#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/worker.hpp"

namespace rowpump::testing {

// Options for a rowpump::Worker on the system's queue and Redis.
inline WorkerOptions e2e_worker_options(const E2eSystem& system,
                                        const std::string& worker_id = "") {
    WorkerOptions options;
    options.redis.host = "127.0.0.1";
    options.redis.port = system.bed.redis.port();
    options.queue = system.queue.name;
    options.worker_id = worker_id;
    return options;
}

}  // namespace rowpump::testing
