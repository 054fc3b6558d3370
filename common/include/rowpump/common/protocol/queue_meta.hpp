#pragma once

// The meta hash (rowpump:{q}:meta): what the dispatcher announces about a queue to its
// workers. Its existence tells a worker that the queue is known; its fields:
//   values    comma-separated names of the values on_success takes ("" when none)
//   lease     the queue's lease, as a duration ("60s")
//   table     the MySQL table behind the queue, for people looking at Redis
//   protocol  the dispatcher's protocol version (protocol_version.hpp); absent means 1

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rowpump/common/duration.hpp"
#include "rowpump/common/protocol/protocol_version.hpp"

namespace rowpump::protocol {

inline constexpr const char* kMetaValues = "values";
inline constexpr const char* kMetaLease = "lease";
inline constexpr const char* kMetaTable = "table";
inline constexpr const char* kMetaProtocol = "protocol";

struct QueueMeta {
    std::vector<std::string> values;
    std::optional<Millis> lease;
    std::string table;
};

// The field/value pairs to HSET into the meta hash, with kMetaProtocol = kProtocolVersion.
std::vector<std::string> meta_fields(const QueueMeta& meta);
// The other way: from field/value pairs as HGETALL returns them, or any subset of them
// ({kMetaValues, "status"}). Absent or unreadable fields stay empty. The protocol field is
// a worker's to judge, with protocol_mismatch().
QueueMeta parse_meta(const std::vector<std::string>& fields);

}  // namespace rowpump::protocol
