// Done messages, as workers send them: parse_done never crashes, a report it accepts formats
// and parses back to the same report, and what the dispatcher would store or log from it is
// safe (a reason MySQL's utf8mb4 column takes, a log text without control bytes).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "rowpump/common/log_text.hpp"
#include "rowpump/common/protocol/messages.hpp"
#include "rowpump/common/protocol/report_rules.hpp"
#include "rowpump/common/utf8.hpp"

using namespace rowpump;

namespace {

void check_log_text(std::string_view text) {
    const auto logged = log_text(text);
    for (unsigned char c : logged) FUZZ_CHECK(c >= 0x20 && c != 0x7F);
    FUZZ_CHECK(valid_utf8(logged) == logged);
    FUZZ_CHECK(logged.size() <= kLogTextBytes + 40);
}

bool same(const protocol::Done& a, const protocol::Done& b) {
    return a.task.id == b.task.id && a.task.token == b.task.token &&
           a.task.attempt == b.task.attempt && a.verb == b.verb && a.values == b.values &&
           a.reason == b.reason && a.delay == b.delay && a.lease == b.lease;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view message(reinterpret_cast<const char*>(data), size);
    check_log_text(message);
    std::string error;
    const auto done = protocol::parse_done(message, error);
    if (!done) {
        FUZZ_CHECK(!error.empty());
        return 0;
    }
    const auto reason = protocol::clip_reason(done->reason);
    FUZZ_CHECK(reason.size() <= protocol::kMaxReasonBytes);
    FUZZ_CHECK(valid_utf8(reason) == reason);
    (void)protocol::value_problem(*done, {"status", "note"});

    const auto formatted = protocol::format_done(*done);
    if (formatted.size() > protocol::kMaxMessageBytes) return 0;  // re-encoding can grow it
    const auto again = protocol::parse_done(formatted, error);
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(same(*done, *again));
    return 0;
}
