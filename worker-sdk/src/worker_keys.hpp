#pragma once

// The Redis keys one worker uses: its queue's, and the two that are its own.

#include <string>

#include "rowpump/common/protocol/keys.hpp"

namespace rowpump::details {

struct WorkerKeys {
    WorkerKeys(const std::string& queue_name, const std::string& worker_id)
        : queue(protocol::keys_for(queue_name)),
          processing(this->queue.processing(worker_id)),
          heartbeat(this->queue.heartbeat(worker_id)) {}

    protocol::Keys queue;
    std::string processing;  // the tasks this worker has in hand
    std::string heartbeat;   // alive while this worker is
};

}  // namespace rowpump::details
