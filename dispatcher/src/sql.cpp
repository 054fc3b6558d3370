#include "rowpump/dispatcher/sql.hpp"

#include <algorithm>

namespace rowpump {

namespace {

constexpr auto npos = std::string_view::npos;

bool is_letter(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    return text;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
               return lower(x) == lower(y);
           });
}

// Index just past the closing quote of the literal or quoted identifier opening at
// text[start], or npos when it never closes. A doubled quote stands for itself; backslash
// escapes exist in string literals but not in `quoted identifiers`.
std::size_t skip_quoted(std::string_view text, std::size_t start) {
    const char quote = text[start];
    const bool escapes = quote != '`';
    for (std::size_t i = start + 1; i < text.size(); ++i) {
        if (escapes && text[i] == '\\') {
            ++i;
        } else if (text[i] == quote) {
            if (i + 1 < text.size() && text[i + 1] == quote) {
                ++i;
            } else {
                return i + 1;
            }
        }
    }
    return npos;
}

// The comment marker starting at text[i], if any. MySQL only treats "-- " as a comment,
// but "--" is rejected whole: `a--1` is rare in a condition and the rule stays simple.
std::string_view comment_marker_at(std::string_view text, std::size_t i) {
    for (std::string_view marker : {"--", "#", "/*"}) {
        if (text.substr(i, marker.size()) == marker) return marker;
    }
    return {};
}

// The end of a :name placeholder starting at text[i] (which is ':'), or npos when the ':'
// starts none.
std::size_t placeholder_end(std::string_view text, std::size_t i) {
    if (i + 1 >= text.size() || !is_letter(text[i + 1])) return npos;
    std::size_t end = i + 2;
    while (end < text.size() && (is_letter(text[end]) || is_digit(text[end]))) ++end;
    return end;
}

// One pass over a fragment: its placeholders, or the first reason to reject it.
struct Scan {
    std::vector<detail::PlaceholderSpan> placeholders;
    std::string error;  // empty when nothing is wrong
};

Scan scan_fragment(std::string_view text) {
    Scan out;
    std::size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '\'' || c == '"' || c == '`') {
            auto end = skip_quoted(text, i);
            if (end == npos) {
                out.error = std::string("has an unterminated ") +
                            (c == '`' ? "quoted identifier" : "string literal") +
                            " starting at column " + std::to_string(i + 1);
                return out;
            }
            i = end;
        } else if (auto marker = comment_marker_at(text, i); !marker.empty()) {
            out.error = "contains the comment marker '" + std::string(marker) +
                        "' outside a string literal (a comment could hide the rest of the "
                        "statement)";
            return out;
        } else if (c == '?') {
            out.error =
                "contains '?' outside a string literal (values come from :name placeholders)";
            return out;
        } else if (c == ':' && i + 1 < text.size() && (text[i + 1] == ':' || text[i + 1] == '=')) {
            i += 2;  // ":=" assigns, "::" is not a placeholder either
        } else if (auto end = c == ':' ? placeholder_end(text, i) : npos; end != npos) {
            out.placeholders.push_back({i, end, std::string(text.substr(i + 1, end - i - 1))});
            i = end;
        } else {
            ++i;
        }
    }
    return out;
}

// One "column [ASC|DESC]" term of an ORDER BY list.
std::optional<OrderTerm> parse_order_term(std::string_view term, std::string& error) {
    std::vector<std::string_view> words;
    for (std::size_t i = 0; i < term.size();) {
        if (is_space(term[i])) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < term.size() && !is_space(term[end])) ++end;
        words.push_back(term.substr(i, end - i));
        i = end;
    }
    if (words.empty()) {
        error = "has an empty term (expected 'column [ASC|DESC], ...')";
    } else if (words.size() > 2) {
        error = "'" + std::string(term) + "' is not 'column [ASC|DESC]'";
    } else if (!is_plain_identifier(words[0])) {
        error = "'" + std::string(words[0]) +
                "' is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_$]*, at most 64 "
                "characters)";
    } else if (words.size() == 2 && !iequals(words[1], "ASC") && !iequals(words[1], "DESC")) {
        error = "expected ASC or DESC after '" + std::string(words[0]) + "', got '" +
                std::string(words[1]) + "'";
    } else {
        return OrderTerm{std::string(words[0]), words.size() == 2 && iequals(words[1], "DESC")};
    }
    return std::nullopt;
}

}  // namespace

bool is_plain_identifier(std::string_view name) {
    if (name.empty() || name.size() > 64 || !is_letter(name[0])) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return is_letter(c) || is_digit(c) || c == '$'; });
}

std::string quote_identifier(std::string_view name) {
    return "`" + std::string(name) + "`";
}

std::optional<std::vector<OrderTerm>> parse_order_by(std::string_view text, std::string& error) {
    if (trim(text).empty()) {
        error = "is empty";
        return std::nullopt;
    }
    std::vector<OrderTerm> terms;
    std::size_t start = 0;
    for (;;) {
        auto comma = text.find(',', start);
        auto term = parse_order_term(trim(text.substr(start, comma - start)), error);
        if (!term) return std::nullopt;
        terms.push_back(std::move(*term));
        if (comma == npos) return terms;
        start = comma + 1;
    }
}

std::string format_order_by(const std::vector<OrderTerm>& terms) {
    std::string out;
    for (const auto& term : terms) {
        if (!out.empty()) out += ", ";
        out += quote_identifier(term.column);
        if (term.descending) out += " DESC";
    }
    return out;
}

std::optional<SqlFragment> parse_fragment(std::string_view text, std::string& error) {
    if (trim(text).empty()) {
        error = "is empty";
        return std::nullopt;
    }
    // Checked before scanning so that a ';' inside a literal is refused too: there is no
    // reason for one, and a mistaken quote would otherwise turn it into a statement end.
    if (text.find(';') != npos) {
        error = "contains ';' (a fragment must be a single expression)";
        return std::nullopt;
    }
    auto scan = scan_fragment(text);
    if (!scan.error.empty()) {
        error = std::move(scan.error);
        return std::nullopt;
    }
    SqlFragment fragment{std::string(text), {}};
    for (auto& span : scan.placeholders) {
        auto& names = fragment.placeholders;
        if (std::find(names.begin(), names.end(), span.name) == names.end()) {
            names.push_back(std::move(span.name));
        }
    }
    return fragment;
}

namespace detail {

std::vector<PlaceholderSpan> find_placeholders(std::string_view text) {
    return scan_fragment(text).placeholders;
}

}  // namespace detail

}  // namespace rowpump
