#pragma once

// One task as a worker holds it: the row id, the claim it came with and the fields of its
// ready message. Shared by the worker SDK's public API and the wire protocol, so it stays free
// of anything internal.

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace rowpump {

// Set once a task's deadline passed (it is then reported as a retry with reason "timeout"): a
// long handler may poll it and give up early; whatever it returns then is discarded. Copies
// share one flag.
class Cancellation {
public:
    bool cancelled() const noexcept { return flag_->load(std::memory_order_acquire); }
    void cancel() const noexcept { flag_->store(true, std::memory_order_release); }

private:
    std::shared_ptr<std::atomic<bool>> flag_ = std::make_shared<std::atomic<bool>>(false);
};

struct Task {
    std::string id;
    std::string token;    // the claim token; opaque
    int attempt = 1;      // 1 on the first try, 2 on the first retry, ...
    std::string message;  // the ready message as found in Redis; empty for a hand-built task
    // The "name=value" fields the dispatcher sent after the token, values percent-decoded; a
    // field sent as a bare name is SQL NULL (std::nullopt). Empty when it sent none.
    std::map<std::string, std::optional<std::string>> fields;
    Cancellation cancellation;

    bool cancelled() const noexcept { return cancellation.cancelled(); }
};

}  // namespace rowpump
