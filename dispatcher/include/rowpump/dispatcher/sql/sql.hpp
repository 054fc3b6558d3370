#pragma once

// SQL text built from configuration: identifiers are validated and quoted, operator-written
// fragments are checked so that they cannot end the statement or comment out the rest, and
// named placeholders are found. Values never go into SQL text: they are bound parameters.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rowpump {

// A plain SQL identifier: [A-Za-z_][A-Za-z0-9_$]*, at most 64 characters.
bool is_plain_identifier(std::string_view name);
// `name` in backquotes. Precondition: is_plain_identifier(name).
std::string quote_identifier(std::string_view name);

struct OrderTerm {
    std::string column;
    bool descending = false;
};
// "updated_time", "priority DESC, id": comma-separated plain identifiers, each with an
// optional ASC or DESC. Returns nullopt and sets `error` on anything else.
std::optional<std::vector<OrderTerm>> parse_order_by(std::string_view text, std::string& error);
std::string format_order_by(const std::vector<OrderTerm>& terms);  // quoted, for SQL

// An operator-written SQL fragment (a WHERE condition or a SET list).
struct SqlFragment {
    std::string text;                       // as written
    std::vector<std::string> placeholders;  // distinct :names, in order of first use
    // Every bare or backquoted name outside string literals (keywords and columns alike, but
    // no function that is called and no @variable): all columns it may read or write are here.
    std::vector<std::string> names;
};
// A fragment must stay one expression of the statement it is placed in. Rejects: empty
// text, ';' anywhere, '?' outside string literals, comment markers ("--", "#", "/*") outside
// string literals, an unterminated string literal or quoted identifier, parentheses that do
// not balance (a ')' closing what the statement opened, a '(' left open), the words SELECT,
// UNION, INTO, INTERSECT and EXCEPT (subqueries, set operations, writes to variables or
// files), and calls of GET_LOCK, RELEASE_LOCK and RELEASE_ALL_LOCKS (the dispatcher's session
// holds the leader lock). Finds :name placeholders outside string literals and quoted
// identifiers (":=" and "::" are not placeholders).
std::optional<SqlFragment> parse_fragment(std::string_view text, std::string& error);

// The fragment's text with each :name replaced by replacement(name).
template <typename F>
std::string substitute_placeholders(const SqlFragment& fragment, F replacement);

namespace detail {
// Byte ranges [begin, end) of each placeholder occurrence, including the ':'.
struct PlaceholderSpan {
    std::size_t begin, end;
    std::string name;
};
std::vector<PlaceholderSpan> find_placeholders(std::string_view text);
}  // namespace detail

template <typename F>
std::string substitute_placeholders(const SqlFragment& fragment, F replacement) {
    std::string out;
    std::size_t pos = 0;
    for (const auto& span : detail::find_placeholders(fragment.text)) {
        out.append(fragment.text, pos, span.begin - pos);
        out += replacement(span.name);
        pos = span.end;
    }
    out.append(fragment.text, pos, std::string::npos);
    return out;
}

}  // namespace rowpump
