#pragma once

// The version of the contract between the dispatcher and workers: the ready and done message
// formats, the key names and the scripts a worker runs (docs/protocol.md). It goes up
// when a worker written for the old contract would misread a task or report it where the
// dispatcher no longer looks; additions either side may ignore (a new meta field, a new
// counter) leave it alone. The dispatcher publishes it in the queue's meta hash
// (kMetaProtocol, queue_meta.hpp); every SDK checks it before it takes a task.

#include <optional>
#include <string>

namespace rowpump::protocol {

inline constexpr int kProtocolVersion = 1;

// The rule every worker applies to the meta hash's `protocol` field (`published`, nullopt
// when the field is absent) before its first fetch: a dispatcher that writes no such field
// speaks version 1 (it predates the field); otherwise the field must be `own` exactly.
// Returns "" when the worker may go on, else the error it raises, naming both versions; the
// worker then takes nothing from the ready list.
std::string protocol_mismatch(const std::optional<std::string>& published,
                              int own = kProtocolVersion);

}  // namespace rowpump::protocol
