#include "rowpump/common/protocol/report_rules.hpp"

#include <algorithm>

namespace rowpump::protocol {

namespace {

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "none" : out;
}

}  // namespace

std::string value_problem(const Done& done, const std::vector<std::string>& declared) {
    for (const auto& [name, value] : done.values) {
        if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
            return "undeclared value '" + name + "' (queue declares: " + joined(declared) + ")";
        }
    }
    if (done.verb != Verb::success) return "";
    for (const auto& name : declared) {
        auto has = [&](const auto& kv) { return kv.first == name; };
        if (std::none_of(done.values.begin(), done.values.end(), has)) {
            return "value '" + name + "' is missing (on_success uses :" + name +
                   "; queue declares: " + joined(declared) + ")";
        }
    }
    return "";
}

std::string clip_utf8(std::string_view text, std::size_t max_bytes) {
    constexpr std::string_view kEllipsis = "...";
    if (text.size() <= max_bytes) return std::string(text);
    if (max_bytes < kEllipsis.size()) return std::string(kEllipsis.substr(0, max_bytes));
    std::size_t cut = max_bytes - kEllipsis.size();
    // Back up to the first byte of the sequence at `cut` (continuation bytes are 10xxxxxx).
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text.substr(0, cut)) + std::string(kEllipsis);
}

}  // namespace rowpump::protocol
