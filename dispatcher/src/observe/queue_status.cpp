#include "observe/queue_status.hpp"

#include <cppconn/exception.h>

#include <iostream>

#include "mysql/due_count.hpp"
#include "observe/queue_redis_view.hpp"
#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

QueueStatus QueueStatusReader::read(const QueueConfig& queue) {
    QueueStatus s;
    s.queue = queue.name;
    auto read =
        read_queue_redis_view(redis_.for_key(protocol::keys_for(queue.name).prefix), queue.name);
    s.redis = std::move(read.state);
    s.paused_by = std::move(read.paused_by);
    s.gauges = std::move(read.gauges);
    s.key_gauges = std::move(read.key_gauges);
    s.key_limits = std::move(read.key_limits);
    for (const auto& d : read.dispatchers) {
        if (d.role == protocol::kRoleLeader)
            s.leader = d.id;
        else
            s.standby.push_back(d.id);
    }
    if (!s.gauges) {
        s.counted_here = true;
        s.gauges = own_count(queue);
    }
    return s;
}

std::optional<protocol::QueueGauges> QueueStatusReader::own_count(const QueueConfig& queue) {
    const auto now = std::chrono::steady_clock::now();
    auto it = counted_.find(queue.name);
    if (it != counted_.end() && now - it->second.at < config_.due_count.interval)
        return it->second.gauges;
    Counted counted{now, std::nullopt};
    try {
        counted.gauges = count_due_everywhere(mysql_, config_, queue);
    } catch (const sql::SQLException& e) {
        if (is_connection_error(e)) throw;
        std::cerr << "queue " << queue.name << ": counting the due rows failed: " << describe(e)
                  << "\n";
    }
    counted_[queue.name] = counted;
    return counted.gauges;
}

}  // namespace rowpump
