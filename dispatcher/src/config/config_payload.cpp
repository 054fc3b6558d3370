#include <algorithm>
#include <cctype>

#include "config/config_columns.hpp"
#include "config/config_sections.hpp"
#include "rowpump/common/protocol/protocol.hpp"

namespace rowpump {

namespace {

bool same_name(const std::string& a, const std::string& b) {
    // MySQL column names are case-insensitive.
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

std::vector<std::string> read_payload(const yaml::Reader& r, const yaml::Item& item) {
    if (!item.node.IsSequence())
        r.fail(item, "must be a list of column names, got " + yaml::describe(item.node));
    std::vector<std::string> columns;
    for (std::size_t i = 0; i < item.node.size(); ++i) {
        const yaml::Item element{item.node[i], item.key + "[" + std::to_string(i) + "]"};
        auto name = read_identifier(r, element);
        // The column's name is the field's name in the ready message.
        if (!protocol::is_valid_value_name(name))
            r.fail(element, "'" + name + "' cannot be a field name ([A-Za-z_][A-Za-z0-9_]*)");
        for (const auto& seen : columns) {
            if (same_name(seen, name)) r.fail(element, "column '" + name + "' is listed twice");
        }
        columns.push_back(std::move(name));
    }
    return columns;
}

std::int64_t read_payload_max(const yaml::Reader& r, const yaml::Item& item) {
    const std::string given = r.scalar(item, "a size like 4096 or 4KiB");
    std::string digits = given;
    std::int64_t unit = 1;
    if (digits.size() > 3 && digits.compare(digits.size() - 3, 3, "KiB") == 0) {
        unit = 1024;
        digits.resize(digits.size() - 3);
    }
    bool out_of_range = false;
    const auto n = yaml::parse_int(digits, out_of_range);
    // Up to the longest message an SDK reads; below 256 bytes an id and token barely fit.
    constexpr auto kMax = static_cast<std::int64_t>(protocol::kMaxMessageBytes);
    if (!n || *n < 1 || *n > kMax / unit || *n * unit < kMinPayloadMax) {
        r.fail(item, "must be a size from " + std::to_string(kMinPayloadMax) + " to " +
                         std::to_string(kMax) + " bytes (e.g. 4096 or 4KiB), got '" + given + "'");
    }
    return *n * unit;
}

}  // namespace rowpump
