// Ready messages, as a worker takes them from Redis: parse_ready never crashes, and a task it
// accepts formats and parses back to the same id and token.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "rowpump/common/protocol/messages.hpp"

using namespace rowpump;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view message(reinterpret_cast<const char*>(data), size);
    std::string error;
    const auto task = protocol::parse_ready(message, error);
    if (!task) {
        FUZZ_CHECK(!error.empty());
        return 0;
    }
    FUZZ_CHECK(protocol::is_valid_token(task->token));
    FUZZ_CHECK(task->attempt >= 1);
    FUZZ_CHECK(protocol::ready_message(*task) == message);
    const auto again = protocol::parse_ready(protocol::format_ready(task->id, task->token), error);
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(again->id == task->id && again->token == task->token &&
               again->attempt == task->attempt);
    return 0;
}
