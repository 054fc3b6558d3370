#include "rowpump/common/redis/redis_connections.hpp"

#include "rowpump/common/redis/cluster_slot.hpp"

namespace rowpump::redis {

Connection& Connections::for_key(std::string_view key) {
    const int slot = address_.cluster.empty() ? 0 : key_slot(key);
    auto it = by_slot_.find(slot);
    if (it != by_slot_.end() && it->second.broken()) {
        by_slot_.erase(it);
        it = by_slot_.end();
    }
    if (it == by_slot_.end())
        it = by_slot_.emplace(slot, Connection::connect_for(address_, key)).first;
    return it->second;
}

}  // namespace rowpump::redis
