#include "redis/nudge_listener.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <system_error>

#include "rowpump/common/backoff.hpp"
#include "rowpump/common/redis/redis.hpp"

namespace rowpump {

NudgeListener::NudgeListener(RedisAddress address, std::string channel,
                             std::function<void()> on_nudge)
    : address_(std::move(address)),
      channel_(std::move(channel)),
      on_nudge_(std::move(on_nudge)),
      stop_fd_(::eventfd(0, EFD_CLOEXEC)) {
    if (stop_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
    thread_ = std::thread([this] { listen(); });
}

NudgeListener::~NudgeListener() {
    const std::uint64_t one = 1;
    if (::write(stop_fd_, &one, sizeof one) < 0) {
        spdlog::error("nudge listener on {}: cannot stop ({})", channel_, errno);
    }
    thread_.join();
    ::close(stop_fd_);
}

void NudgeListener::listen() {
    Backoff backoff(Millis(100), Millis(5000));
    for (;;) {
        try {
            listen_once(backoff);
            return;  // stopped
        } catch (const redis::Error& e) {
            // The queue's own loop logs Redis outages; here they only mean polling alone.
            spdlog::debug("nudge listener on {}: {}", channel_, e.what());
        }
        if (stopped_within(static_cast<int>(backoff.next().count()))) return;
    }
}

void NudgeListener::listen_once(Backoff& backoff) {
    auto redis = redis::Connection::connect(address_);
    redis.command({"SUBSCRIBE", channel_});
    backoff.reset();
    spdlog::debug("nudge listener: subscribed to {}", channel_);
    while (auto message = redis.wait_reply(stop_fd_)) on_nudge_();
}

bool NudgeListener::stopped_within(int ms) const {
    pollfd fd{stop_fd_, POLLIN, 0};
    return ::poll(&fd, 1, ms) > 0;
}

}  // namespace rowpump
