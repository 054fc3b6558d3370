#include "rowpump/dispatcher/observe/systemd_notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace rowpump {

namespace {

// WATCHDOG_PID names the process the watchdog is meant for; a child that inherited the
// environment must not answer for its parent.
bool watchdog_is_ours() {
    const char* pid = std::getenv("WATCHDOG_PID");
    return pid == nullptr || std::strtoll(pid, nullptr, 10) == static_cast<long long>(getpid());
}

}  // namespace

SystemdNotifier SystemdNotifier::from_environment() {
    SystemdNotifier notifier;
    const char* socket = std::getenv("NOTIFY_SOCKET");
    // Only absolute paths and abstract names ('@'): anything else is not from systemd.
    if (socket != nullptr && (socket[0] == '/' || socket[0] == '@') &&
        std::strlen(socket) < sizeof(sockaddr_un::sun_path)) {
        notifier.socket_path_ = socket;
    }
    const char* usec = std::getenv("WATCHDOG_USEC");
    if (notifier.enabled() && usec != nullptr && watchdog_is_ours()) {
        const long long value = std::strtoll(usec, nullptr, 10);
        if (value > 0) notifier.watchdog_ = Millis(std::max(1LL, value / 1000));
    }
    return notifier;
}

bool SystemdNotifier::notify(const std::string& state) const noexcept {
    if (!enabled()) return false;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, socket_path_.data(), socket_path_.size());
    if (address.sun_path[0] == '@') address.sun_path[0] = '\0';
    const auto length =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path_.size());

    const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const ssize_t sent = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&address), length);
    close(fd);
    return sent == static_cast<ssize_t>(state.size());
}

}  // namespace rowpump
