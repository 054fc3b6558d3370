// Percent-encoding of ids and values: encoding then decoding gives the bytes back, whatever
// they are, and decoding arbitrary text never crashes; what decodes survives a round trip.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "rowpump/common/protocol/messages.hpp"

using namespace rowpump;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view raw(reinterpret_cast<const char*>(data), size);
    const auto encoded = protocol::percent_encode(raw);
    for (char c : encoded) FUZZ_CHECK(c != ' ' && c != ':' && c != '=' && c != '\n');
    FUZZ_CHECK(protocol::percent_decode(encoded) == std::string(raw));
    if (const auto decoded = protocol::percent_decode(raw)) {
        FUZZ_CHECK(protocol::percent_decode(protocol::percent_encode(*decoded)) == decoded);
    }
    return 0;
}
