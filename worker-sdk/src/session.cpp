#include "session.hpp"

#include <algorithm>
#include <string_view>
#include <thread>
#include <utility>

#include "rowpump/common/protocol/keys.hpp"

namespace rowpump::details {

void sleep_unless(milliseconds duration, const std::atomic<bool>& stop) {
    using Clock = std::chrono::steady_clock;
    const auto until = Clock::now() + duration;
    while (!stop.load(std::memory_order_relaxed) && Clock::now() < until) {
        std::this_thread::sleep_for(std::min(milliseconds{50}, duration));
    }
}

Session::Session(RedisAddress address, const std::string& queue)
    : address_(std::move(address)), route_(protocol::keys_for(queue).prefix) {}

redis::Connection& Session::connection(milliseconds min_timeout) {
    if (connection_ && connection_->broken()) connection_.reset();
    if (!connection_) {
        connection_.emplace(redis::Connection::connect_for(address_, route_));
        timeout_ = redis::kDefaultCommandTimeout;
    }
    // The timeout only ever grows: one setsockopt per connection, not one per command.
    if (min_timeout > timeout_) {
        connection_->set_timeout(min_timeout);
        timeout_ = min_timeout;
    }
    return *connection_;
}

template <class F>
auto Session::guarded(milliseconds min_timeout, F&& f) {
    try {
        return f(connection(min_timeout));
    } catch (const redis::IoError&) {
        connection_.reset();
        throw;
    }
}

RedisEndpoint Session::node() {
    return guarded(milliseconds{0}, [](redis::Connection& c) { return c.node(); });
}

redis::Reply Session::command(const std::vector<std::string>& args) {
    return guarded(milliseconds{0}, [&](redis::Connection& c) { return c.command(args); });
}

redis::Reply Session::blocking_command(const std::vector<std::string>& args, milliseconds block) {
    return guarded(block + redis::kDefaultCommandTimeout,
                   [&](redis::Connection& c) { return c.command(args); });
}

std::vector<redis::Reply> Session::pipeline(const std::vector<std::vector<std::string>>& commands) {
    return guarded(milliseconds{0}, [&](redis::Connection& c) {
        for (const auto& args : commands) c.append(args);
        return c.read_replies(commands.size());
    });
}

void Session::append(const std::vector<std::string>& args, milliseconds block) {
    auto timeout = block.count() > 0 ? block + redis::kDefaultCommandTimeout : milliseconds{0};
    guarded(timeout, [&](redis::Connection& c) {
        c.append(args);
        return 0;
    });
}

redis::Reply Session::read_reply() {
    return guarded(milliseconds{0}, [](redis::Connection& c) { return c.read_reply(); });
}

namespace {

bool is_noperm(const redis::ReplyError& e) {
    return std::string_view(e.what()).rfind("NOPERM", 0) == 0;
}

}  // namespace

redis::Reply Session::eval(const redis::Script& script, const std::vector<std::string>& keys,
                           const std::vector<std::string>& args) {
    try {
        return guarded(milliseconds{0},
                       [&](redis::Connection& c) { return script.eval(c, keys, args); });
    } catch (const redis::ReplyError& e) {
        // EVALSHA found no script, and EVAL is refused: this user runs loaded scripts only.
        if (!is_noperm(e) || std::string_view(e.what()).find("'eval'") == std::string_view::npos)
            throw;
        throw redis::ReplyError(
            "Redis does not have script " + std::string(script.sha1()) +
            " loaded (lost after a restart or failover) and this Redis user may not run EVAL; "
            "waiting for a dispatcher to load the scripts again (" +
            e.what() + ")");
    }
}

void Session::load(const std::vector<const redis::Script*>& scripts) {
    guarded(milliseconds{0}, [&](redis::Connection& c) {
        try {
            redis::Script::load(c, scripts);
        } catch (const redis::ReplyError& e) {
            // A user that may not load scripts runs those the dispatcher loaded for it.
            if (!is_noperm(e)) throw;
        }
        return 0;
    });
}

}  // namespace rowpump::details
