#pragma once

// What a worker says about itself in its heartbeat key's value, for the workers view
// (`rowpump status`, status --json, the dashboard): "host=<h>;lang=<l>;version=<v>;done=<n>;
// ttl=<ms>", values percent-encoded. It is for display only: nothing the dispatcher decides
// depends on it, and a value that is not in this form (an older worker's) shows as unknown.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rowpump::protocol {

// A heartbeat value longer than this is read only this far (GETRANGE).
constexpr std::size_t kMaxWorkerInfoBytes = 512;
// Each text field is shown escaped (log_text) and cut to this many bytes.
constexpr std::size_t kMaxWorkerInfoText = 64;

struct WorkerInfo {
    std::string host;
    std::string lang;                    // cpp, python, node
    std::string version;                 // the SDK's version
    std::optional<std::int64_t> done;    // reports the worker made that the done list took
    std::optional<std::int64_t> ttl_ms;  // its heartbeat TTL: the last beat was ttl - PTTL ago
};

std::string format_worker_info(const WorkerInfo& info);
// Never fails: unknown or malformed fields are left out, text is escaped and cut.
WorkerInfo parse_worker_info(std::string_view value);

// This machine's host name, "" when it cannot be read.
std::string host_name();

}  // namespace rowpump::protocol
