#pragma once

// Values for ${VAR} in the config. A systemd credential named VAR (LoadCredential=, a file in
// $CREDENTIALS_DIRECTORY) comes first: it reaches only this service, is never part of its
// environment (which child processes and crash reports see), and the unit needs no
// EnvironmentFile. Otherwise the environment variable VAR. Trailing line breaks of a
// credential file are dropped (`echo secret >file` writes one).

#include <optional>
#include <string>

namespace rowpump {

std::optional<std::string> lookup_variable(const std::string& name);

}  // namespace rowpump
