#include <catch2/catch.hpp>

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "rowpump/dispatcher/observe/queue_health.hpp"
#include "rowpump/dispatcher/observe/systemd_notify.hpp"

using namespace rowpump;

namespace {

// A datagram socket standing in for systemd's notify socket.
class NotifySocket {
public:
    NotifySocket() : path_("/tmp/rowpump-notify-" + std::to_string(::getpid())) {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path_.c_str(), sizeof address.sun_path - 1);
        ::unlink(path_.c_str());
        REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    }
    ~NotifySocket() {
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    const std::string& path() const { return path_; }
    std::string receive() {
        char buffer[4096];
        const auto n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
        return n < 0 ? std::string("<nothing>") : std::string(buffer, static_cast<std::size_t>(n));
    }

private:
    std::string path_;
    int fd_;
};

}  // namespace

TEST_CASE("sd_notify messages reach $NOTIFY_SOCKET and the watchdog comes from the environment",
          "[systemd]") {
    NotifySocket socket;
    ::setenv("NOTIFY_SOCKET", socket.path().c_str(), 1);
    ::setenv("WATCHDOG_USEC", "3000000", 1);
    ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
    auto notifier = SystemdNotifier::from_environment();
    CHECK(notifier.enabled());
    REQUIRE(notifier.watchdog());
    CHECK(notifier.watchdog()->count() == 3000);
    CHECK(notifier.notify("READY=1\nSTATUS=q: leader"));
    CHECK(socket.receive() == "READY=1\nSTATUS=q: leader");

    // The watchdog was meant for another process (e.g. this one's parent).
    ::setenv("WATCHDOG_PID", "1", 1);
    CHECK_FALSE(SystemdNotifier::from_environment().watchdog());

    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
    ::unsetenv("WATCHDOG_PID");
    auto disabled = SystemdNotifier::from_environment();
    CHECK_FALSE(disabled.enabled());
    CHECK_FALSE(disabled.watchdog());
    CHECK_FALSE(disabled.notify("READY=1"));
}

TEST_CASE("a queue is stuck only while one cycle runs past the limit, never while it sleeps",
          "[systemd]") {
    QueueHealth health("q");
    const TimePoint t0{std::chrono::seconds(100)};
    CHECK_FALSE(health.connected_once());
    CHECK(health.describe() == "q: connecting");

    health.cycle_started(t0);
    CHECK_FALSE(health.stuck(t0 + Millis(2000), Millis(3000)));
    CHECK(health.stuck(t0 + Millis(3001), Millis(3000)));
    health.cycle_ended();
    CHECK_FALSE(health.stuck(t0 + Millis(60000), Millis(3000)));

    health.set_role(QueueRole::retrying, "MySQL error 2002:\ncan't connect");
    CHECK_FALSE(health.connected_once());
    CHECK(health.describe() == "q: retrying after: MySQL error 2002: can't connect");
    health.set_role(QueueRole::standby);
    CHECK(health.connected_once());
    health.set_role(QueueRole::leader);
    health.add_dispatched(1200);
    CHECK(health.describe() == "q: leader, 1200 rows dispatched");
}
