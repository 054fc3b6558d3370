#include "observe/queue_status.hpp"

#include <cppconn/exception.h>

#include <iostream>

#include "mysql/due_count.hpp"
#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/protocol/queue_pause.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

QueueStatus QueueStatusReader::read(const QueueConfig& queue) {
    const auto keys = protocol::keys_for(queue.name);
    QueueStatus s;
    s.queue = queue.name;
    auto& redis = redis_.for_key(keys.prefix);
    s.redis = protocol::read_queue_state(redis, queue.name);
    s.paused_by = protocol::paused_by(redis, queue.name);
    const auto now = protocol::unix_ms();
    for (const auto& d :
         protocol::parse_dispatchers(redis.command({"HGETALL", keys.dispatchers}).strings())) {
        if (now - d.at_ms > protocol::kDispatcherFresh.count()) continue;
        if (d.role == "leader")
            s.leader = d.id;
        else
            s.standby.push_back(d.id);
    }
    s.gauges = protocol::parse_gauges(redis.command({"HGETALL", keys.gauges}).strings());
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
