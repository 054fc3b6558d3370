#pragma once

// The service manager's notification protocol (sd_notify(3)): one datagram per message, sent
// to the unix socket named by $NOTIFY_SOCKET. It is a dozen lines, so they are written out
// here rather than linking libsystemd: the protocol is stable and documented, and the same
// binary then runs unchanged with or without systemd (containers, the .deb's dependencies).

#include <optional>
#include <string>

#include "rowpump/common/duration.hpp"

namespace rowpump {

class SystemdNotifier {
public:
    // Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID. Without NOTIFY_SOCKET (not started
    // by systemd as Type=notify) the notifier is disabled and notify() does nothing.
    static SystemdNotifier from_environment();

    bool enabled() const { return !socket_path_.empty(); }
    // How often systemd wants WATCHDOG=1 (WatchdogSec=); nullopt when no watchdog is set.
    std::optional<Millis> watchdog() const { return watchdog_; }
    // Sends newline-separated assignments, e.g. "READY=1\nSTATUS=...". False if not sent.
    bool notify(const std::string& state) const noexcept;

private:
    std::string socket_path_;
    std::optional<Millis> watchdog_;
};

}  // namespace rowpump
