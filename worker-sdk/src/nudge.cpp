#include "rowpump/nudge.hpp"

#include <optional>
#include <utility>

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/redis/redis.hpp"

namespace rowpump {

struct Nudger::Impl {
    RedisAddress redis;
    std::string channel;
    std::optional<redis::Connection> connection;
};

Nudger::Nudger(RedisAddress redis, const std::string& queue) {
    if (!protocol::is_valid_name(queue)) {
        throw Error("nudge: queue '" + queue + "' must be 1 to 64 characters from [A-Za-z0-9_.-]");
    }
    impl_ = std::make_unique<Impl>(Impl{std::move(redis), protocol::keys_for(queue).nudge, {}});
}

Nudger::~Nudger() = default;
Nudger::Nudger(Nudger&&) noexcept = default;
Nudger& Nudger::operator=(Nudger&&) noexcept = default;

void Nudger::nudge() {
    try {
        if (!impl_->connection) impl_->connection = redis::Connection::connect(impl_->redis);
        impl_->connection->command({"PUBLISH", impl_->channel, "1"});
    } catch (const redis::Error& e) {
        impl_->connection.reset();
        throw ConnectionError(std::string("nudge: ") + e.what());
    }
}

void nudge(const RedisAddress& redis, const std::string& queue) {
    Nudger(redis, queue).nudge();
}

}  // namespace rowpump
