#include "rowpump/common/protocol/keys.hpp"

#include <algorithm>

namespace rowpump::protocol {

std::string Keys::processing(std::string_view worker_id) const {
    return prefix + "processing:" + std::string(worker_id);
}

std::string Keys::heartbeat(std::string_view worker_id) const {
    return prefix + "heartbeat:" + std::string(worker_id);
}

std::string Keys::shard_leader(std::string_view shard) const {
    return leader + ":" + std::string(shard);
}

std::string Keys::shard_done(std::string_view shard) const {
    return done + ":" + std::string(shard);
}

std::string Keys::shard_standby(std::string_view shard) const {
    return prefix + "standby:" + std::string(shard);
}

Keys keys_for(std::string_view queue) {
    Keys k;
    k.prefix = "rowpump:{" + std::string(queue) + "}:";
    k.ready = k.prefix + "ready";
    k.done = k.prefix + "done";
    k.bad = k.prefix + "bad";
    k.workers = k.prefix + "workers";
    k.meta = k.prefix + "meta";
    k.stats = k.prefix + "stats";
    k.gauges = k.prefix + "gauges";
    k.dispatchers = k.prefix + "dispatchers";
    k.paused = k.prefix + "paused";
    k.window = k.prefix + "window";
    k.key_rate = k.prefix + "key_rate";
    k.key_limits = k.prefix + "key_limits";
    k.leader = k.prefix + "leader";
    k.epoch = k.prefix + "epoch";
    k.secret = k.prefix + "secret";
    k.nudge = k.prefix + "nudge";
    k.key_gauges = k.prefix + "key_gauges";
    return k;
}

bool is_valid_name(std::string_view name) {
    auto allowed = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_';
    };
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), allowed);
}

}  // namespace rowpump::protocol
