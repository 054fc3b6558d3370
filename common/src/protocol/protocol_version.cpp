#include "rowpump/common/protocol/protocol_version.hpp"

#include "rowpump/common/log_text.hpp"

namespace rowpump::protocol {

namespace {

constexpr int kUnpublishedVersion = 1;

// "1" -> 1; anything but 1 to 9 decimal digits -> nullopt.
std::optional<int> parse_version(const std::string& text) {
    if (text.empty() || text.size() > 9) return std::nullopt;
    int n = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + (c - '0');
    }
    return n;
}

}  // namespace

std::string protocol_mismatch(const std::optional<std::string>& published, int own) {
    const auto theirs = published ? parse_version(*published) : kUnpublishedVersion;
    if (theirs == own) return "";
    const std::string dispatcher =
        theirs ? "protocol version " + std::to_string(*theirs)
               : "an unreadable protocol version '" + log_text(*published, 40) + "'";
    return "the dispatcher speaks " + dispatcher + ", this worker protocol version " +
           std::to_string(own) +
           "; run a worker and a dispatcher of the same protocol version (docs/upgrading.md); no "
           "task was taken";
}

}  // namespace rowpump::protocol
