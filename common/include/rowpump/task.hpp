#pragma once

// One task as a worker holds it: the row id and the claim it came with. Shared by the worker
// SDK's public API and the wire protocol, so it stays free of anything internal.

#include <string>

namespace rowpump {

struct Task {
    std::string id;
    std::string token;    // the claim token; opaque
    int attempt = 1;      // 1 on the first try, 2 on the first retry, ...
    std::string message;  // the ready message as found in Redis; empty for a hand-built task
};

}  // namespace rowpump
