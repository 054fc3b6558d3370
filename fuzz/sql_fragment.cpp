// The SQL fragment checks of the config (due, on_success, on_dead, order_by): never a crash;
// an accepted fragment can never close a parenthesis it did not open, its placeholders are
// all replaced by substitution, and an accepted order_by formats back to the same terms.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "rowpump/dispatcher/sql/sql.hpp"

using namespace rowpump;

namespace {

void check_fragment(std::string_view text) {
    std::string error;
    const auto fragment = parse_fragment(text, error);
    if (!fragment) {
        FUZZ_CHECK(!error.empty());
        return;
    }
    const std::string wrapped = "(" + std::string(text) + "))";
    FUZZ_CHECK(!parse_fragment(wrapped, error));
    FUZZ_CHECK(error.find("at column " + std::to_string(wrapped.size())) != std::string::npos);
    const auto substituted =
        substitute_placeholders(*fragment, [](const std::string&) { return "@v"; });
    const auto again = parse_fragment(substituted, error);
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(again->placeholders.empty());
}

void check_order_by(std::string_view text) {
    std::string error;
    const auto terms = parse_order_by(text, error);
    if (!terms) return;
    std::string plain;
    for (const auto& term : *terms) {
        FUZZ_CHECK(is_plain_identifier(term.column));
        plain += (plain.empty() ? "" : ", ") + term.column + (term.descending ? " DESC" : "");
    }
    const auto again = parse_order_by(plain, error);
    FUZZ_CHECK(again.has_value() && format_order_by(*again) == format_order_by(*terms));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_fragment(text);
    check_order_by(text);
    return 0;
}
