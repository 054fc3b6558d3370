#include "rowpump/common/protocol/queue_stats.hpp"

namespace rowpump::protocol {

std::int64_t stat(const Stats& stats, const char* name) {
    auto it = stats.find(name);
    return it == stats.end() ? 0 : it->second;
}

}  // namespace rowpump::protocol
