// Durations ("1m30s") and rates ("10/s") from configs and done messages: parsing never
// crashes or overflows, and what parses formats back to the same value.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "rowpump/common/duration.hpp"
#include "rowpump/dispatcher/config/config.hpp"

using namespace rowpump;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (const auto duration = parse_duration(text)) {
        FUZZ_CHECK(duration->count() >= 0);
        FUZZ_CHECK(parse_duration(format_duration(*duration)) == duration);
    }
    if (const auto rate = parse_rate(text)) {
        FUZZ_CHECK(rate->count >= 0 && rate->per.count() >= 0);
        const auto again =
            parse_rate(std::to_string(rate->count) + "/" + format_duration(rate->per));
        FUZZ_CHECK(again.has_value());
        FUZZ_CHECK(again->count == rate->count && again->per == rate->per);
    }
    return 0;
}
