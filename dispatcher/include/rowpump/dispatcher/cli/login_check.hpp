#pragma once

// Logging in to both servers once before the dispatcher starts. A server that is down is
// waited out by the queues; a server that refuses the credentials will refuse them on every
// retry, so that is fatal at start.

#include <optional>
#include <string>

#include "rowpump/dispatcher/config/config.hpp"

namespace rowpump {

// Exit status of `rowpump run` when a server refused the login at start.
constexpr int kLoginRefusedExit = 3;

// What a server said when it refused the configured user or password, naming the server and
// the config key to fix; nullopt when both logins work or a server could not be reached.
std::optional<std::string> refused_login(const Config& config);

}  // namespace rowpump
