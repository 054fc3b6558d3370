#include "rowpump/common/duration.hpp"

#include <cstdint>
#include <limits>

namespace rowpump {

namespace {

std::optional<std::int64_t> unit_millis(std::string_view unit) {
    if (unit == "ms") return 1;
    if (unit == "s") return 1000;
    if (unit == "m") return 60 * 1000;
    if (unit == "h") return 60 * 60 * 1000;
    return std::nullopt;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

}  // namespace

std::optional<Millis> parse_duration(std::string_view text) {
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max() / 1000;
    if (text.empty()) return std::nullopt;
    std::int64_t total = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        std::int64_t number = 0;
        std::size_t digits = 0;
        for (; i < text.size() && is_digit(text[i]); ++i, ++digits) {
            number = number * 10 + (text[i] - '0');
            if (number > kMax) return std::nullopt;
        }
        std::size_t unit_start = i;
        while (i < text.size() && !is_digit(text[i])) ++i;
        auto scale = unit_millis(text.substr(unit_start, i - unit_start));
        if (digits == 0 || !scale || number > kMax / *scale) return std::nullopt;
        total += number * *scale;
        if (total > kMax) return std::nullopt;
    }
    return Millis(total);
}

std::string format_duration(Millis d) {
    const auto ms = d.count();
    if (ms != 0 && ms % (60 * 60 * 1000) == 0) return std::to_string(ms / (60 * 60 * 1000)) + "h";
    if (ms != 0 && ms % (60 * 1000) == 0) return std::to_string(ms / (60 * 1000)) + "m";
    if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

}  // namespace rowpump
