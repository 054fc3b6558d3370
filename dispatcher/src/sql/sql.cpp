#include "rowpump/dispatcher/sql/sql.hpp"

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

// Words that would turn the fragment into more than one expression of the statement it is
// placed in: a subquery or a set operation reads other rows or tables, INTO writes variables
// or files.
bool is_refused_keyword(std::string_view word) {
    for (std::string_view keyword : {"SELECT", "UNION", "INTO", "INTERSECT", "EXCEPT"}) {
        if (iequals(word, keyword)) return true;
    }
    return false;
}

// Functions that act on the dispatcher's session, which holds the queue's leader lock.
bool is_refused_function(std::string_view word) {
    for (std::string_view name : {"GET_LOCK", "RELEASE_LOCK", "RELEASE_ALL_LOCKS"}) {
        if (iequals(word, name)) return true;
    }
    return false;
}

// One pass over a fragment: its placeholders, or the first reason to reject it.
struct Scan {
    std::vector<detail::PlaceholderSpan> placeholders;
    std::vector<std::string> names;  // see SqlFragment::names
    std::string error;               // empty when nothing is wrong
};

class FragmentScanner {
public:
    explicit FragmentScanner(std::string_view text) : text_(text) {}

    Scan run() {
        while (i_ < text_.size() && out_.error.empty()) step();
        if (out_.error.empty() && depth_ > 0) {
            out_.error = "has " + std::to_string(depth_) +
                         " unclosed '(' (a fragment must be one balanced expression)";
        }
        return std::move(out_);
    }

private:
    void step() {
        const char c = text_[i_];
        if (c == '\'' || c == '"' || c == '`') {
            quoted(c);
        } else if (auto marker = comment_marker_at(text_, i_); !marker.empty()) {
            out_.error = "contains the comment marker '" + std::string(marker) +
                         "' outside a string literal (a comment could hide the rest of the "
                         "statement)";
        } else if (c == '?') {
            out_.error =
                "contains '?' outside a string literal (values come from :name placeholders)";
        } else if (c == '(' || c == ')') {
            parenthesis(c);
        } else if (c == ':') {
            colon();
        } else if (is_letter(c) || is_digit(c) || c == '$' || c == '@') {
            word();
        } else {
            ++i_;
        }
    }

    void quoted(char quote) {
        auto end = skip_quoted(text_, i_);
        if (end == npos) {
            out_.error = std::string("has an unterminated ") +
                         (quote == '`' ? "quoted identifier" : "string literal") +
                         " starting at column " + std::to_string(i_ + 1);
            return;
        }
        if (quote == '`') out_.names.push_back(unquoted_identifier(text_.substr(i_, end - i_)));
        i_ = end;
    }

    static std::string unquoted_identifier(std::string_view quoted) {
        std::string out;
        for (std::size_t k = 1; k + 1 < quoted.size(); ++k) {
            out += quoted[k];
            if (quoted[k] == '`') ++k;  // a doubled backquote stands for one
        }
        return out;
    }

    void parenthesis(char c) {
        depth_ += c == '(' ? 1 : -1;
        if (depth_ < 0) {
            out_.error = "has a ')' at column " + std::to_string(i_ + 1) +
                         " that closes no '(' of its own (a fragment must be one balanced "
                         "expression)";
        }
        ++i_;
    }

    void colon() {
        if (i_ + 1 < text_.size() && (text_[i_ + 1] == ':' || text_[i_ + 1] == '=')) {
            i_ += 2;  // ":=" assigns, "::" is not a placeholder either
        } else if (auto end = placeholder_end(text_, i_); end != npos) {
            out_.placeholders.push_back({i_, end, std::string(text_.substr(i_ + 1, end - i_ - 1))});
            i_ = end;
        } else {
            ++i_;
        }
    }

    // A keyword, a name, a number or a @variable: read whole, so that a column named
    // `selection` is not taken for SELECT.
    void word() {
        const std::size_t start = i_;
        while (i_ < text_.size() && (is_letter(text_[i_]) || is_digit(text_[i_]) ||
                                     text_[i_] == '$' || text_[i_] == '@')) {
            ++i_;
        }
        const auto word = text_.substr(start, i_ - start);
        if (!is_letter(word[0])) return;
        if (is_refused_keyword(word)) {
            out_.error = "contains " + upper(word) +
                         " (a fragment must be one expression of its statement: no subquery, "
                         "UNION or INTO)";
        } else if (!next_is_open_parenthesis()) {
            out_.names.emplace_back(word);
        } else if (is_refused_function(word)) {
            out_.error = "calls " + upper(word) +
                         "(), which acts on the dispatcher's session and its leader lock";
        }
    }

    bool next_is_open_parenthesis() const {
        std::size_t k = i_;
        while (k < text_.size() && is_space(text_[k])) ++k;
        return k < text_.size() && text_[k] == '(';
    }

    static std::string upper(std::string_view word) {
        std::string out(word);
        for (auto& ch : out) {
            if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
        }
        return out;
    }

    std::string_view text_;
    std::size_t i_ = 0;
    int depth_ = 0;
    Scan out_;
};

Scan scan_fragment(std::string_view text) {
    return FragmentScanner(text).run();
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
    SqlFragment fragment{std::string(text), {}, std::move(scan.names)};
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
