#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rowpump/dispatcher/sql/sql.hpp"

using namespace rowpump;

namespace {

// The error parse_fragment gives, or "" when it accepts the text.
std::string fragment_error(std::string_view text) {
    std::string error;
    auto fragment = parse_fragment(text, error);
    if (fragment) return "";
    CHECK_FALSE(error.empty());
    return error;
}

std::vector<std::string> placeholders_of(std::string_view text) {
    std::string error;
    auto fragment = parse_fragment(text, error);
    INFO(error);
    REQUIRE(fragment);
    return fragment->placeholders;
}

std::string order_by_error(std::string_view text) {
    std::string error;
    CHECK_FALSE(parse_order_by(text, error));
    return error;
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("plain identifiers", "[sql]") {
    for (const char* ok : {"a", "_", "user_id", "A1", "a$b", "rp_lease_until", "x_$_9"}) {
        INFO(ok);
        CHECK(is_plain_identifier(ok));
    }
    for (const char* bad : {"", "1a", "$a", "a-b", "a b", "`a`", "a.b", "a;", "é", "a\"", "a'"}) {
        INFO(bad);
        CHECK_FALSE(is_plain_identifier(bad));
    }
    CHECK(is_plain_identifier(std::string(64, 'a')));
    CHECK_FALSE(is_plain_identifier(std::string(65, 'a')));
}

TEST_CASE("identifiers are quoted with backquotes", "[sql]") {
    CHECK(quote_identifier("user_id") == "`user_id`");
    CHECK(quote_identifier("a$b") == "`a$b`");
}

TEST_CASE("order_by parses columns with an optional direction", "[sql]") {
    std::string error;
    auto one = parse_order_by("updated_time", error);
    REQUIRE(one);
    REQUIRE(one->size() == 1);
    CHECK((*one)[0].column == "updated_time");
    CHECK_FALSE((*one)[0].descending);

    auto two = parse_order_by("  priority DESC,id asc ,\tcreated  desc ", error);
    REQUIRE(two);
    REQUIRE(two->size() == 3);
    CHECK((*two)[0].column == "priority");
    CHECK((*two)[0].descending);
    CHECK((*two)[1].column == "id");
    CHECK_FALSE((*two)[1].descending);
    CHECK((*two)[2].column == "created");
    CHECK((*two)[2].descending);
    CHECK(format_order_by(*two) == "`priority` DESC, `id`, `created` DESC");
    CHECK(format_order_by({}) == "");
}

TEST_CASE("order_by rejects anything but plain columns", "[sql]") {
    CHECK(order_by_error("") == "is empty");
    CHECK(order_by_error("   ") == "is empty");
    CHECK(order_by_error("a,") == "has an empty term (expected 'column [ASC|DESC], ...')");
    CHECK(order_by_error(",a") == "has an empty term (expected 'column [ASC|DESC], ...')");
    CHECK(order_by_error("a,,b") == "has an empty term (expected 'column [ASC|DESC], ...')");
    CHECK(order_by_error("a DESC x") == "'a DESC x' is not 'column [ASC|DESC]'");
    CHECK(order_by_error("a DOWN") == "expected ASC or DESC after 'a', got 'DOWN'");
    CHECK(order_by_error("updated-time") ==
          "'updated-time' is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_$]*, at most 64 "
          "characters)");
    CHECK(order_by_error("`a`") ==
          "'`a`' is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_$]*, at most 64 characters)");
    CHECK(order_by_error("RAND()") ==
          "'RAND()' is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_$]*, at most 64 "
          "characters)");
    CHECK(order_by_error("a;b") ==
          "'a;b' is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_$]*, at most 64 characters)");
}

TEST_CASE("fragments: accepted text is kept as written", "[sql]") {
    std::string error;
    const std::string text = "updated_time < NOW(3) - INTERVAL 10 SECOND AND note = 'a'";
    auto fragment = parse_fragment(text, error);
    REQUIRE(fragment);
    CHECK(fragment->text == text);
    CHECK(fragment->placeholders.empty());
}

TEST_CASE("fragments: statement ends, comments and '?' are rejected", "[sql]") {
    const std::string semicolon = "contains ';' (a fragment must be a single expression)";
    CHECK(fragment_error("status = 0; DROP TABLE users") == semicolon);
    CHECK(fragment_error("status = 0;") == semicolon);
    CHECK(fragment_error("note = 'a;b'") == semicolon);  // ';' is refused even in a literal
    CHECK(fragment_error("`a;b` = 1") == semicolon);

    CHECK(fragment_error("status = ?") ==
          "contains '?' outside a string literal (values come from :name placeholders)");
    CHECK(fragment_error("note = '?' AND x = \"?\" AND `?` = 1") == "");

    auto comment = [](const char* marker) {
        return std::string("contains the comment marker '") + marker +
               "' outside a string literal (a comment could hide the rest of the statement)";
    };
    CHECK(fragment_error("status = 0 -- AND x") == comment("--"));
    CHECK(fragment_error("status = 0 # AND x") == comment("#"));
    CHECK(fragment_error("status = 0 /* AND x */") == comment("/*"));
    CHECK(fragment_error("a = 1 -- ") == comment("--"));
    CHECK(fragment_error("note = '--' AND n = \"#\" AND m = '/*' AND `#x` = 1") == "");
    CHECK(fragment_error("a = b - -1 AND c = d / 2 AND e = f * 3") == "");
}

TEST_CASE("fragments: empty and unterminated text is rejected", "[sql]") {
    CHECK(fragment_error("") == "is empty");
    CHECK(fragment_error(" \t\n") == "is empty");
    CHECK(fragment_error("note = 'abc") ==
          "has an unterminated string literal starting at column 8");
    CHECK(fragment_error("note = \"abc") ==
          "has an unterminated string literal starting at column 8");
    CHECK(fragment_error("`note = 1") ==
          "has an unterminated quoted identifier starting at column 1");
    // The backslash escapes the closing quote, so the literal never ends.
    CHECK(fragment_error("note = 'abc\\'") ==
          "has an unterminated string literal starting at column 8");
    // A doubled quote is a quote inside the literal.
    CHECK(fragment_error("note = 'abc''") ==
          "has an unterminated string literal starting at column 8");
    // Backslashes do not escape inside quoted identifiers.
    CHECK(fragment_error("`a\\` = 1") == "");
}

TEST_CASE("fragments: quotes inside literals do not end them", "[sql]") {
    // Each literal hides a comment marker that must not be seen.
    CHECK(fragment_error("note = 'it''s -- fine'") == "");
    CHECK(fragment_error("note = 'it\\'s -- fine'") == "");
    CHECK(fragment_error("note = \"say \"\"#\"\"\"") == "");
    CHECK(fragment_error("note = \"say \\\"#\\\"\"") == "");
    CHECK(fragment_error("`we``ird #` = 1") == "");
    CHECK(fragment_error("note = 'a\"b' AND x = \"c'd\" AND `e'f` = 1") == "");
    // ...and after the literal, scanning resumes.
    CHECK(fragment_error("note = 'it''s' -- x") ==
          "contains the comment marker '--' outside a string literal (a comment could hide the "
          "rest of the statement)");
}

TEST_CASE("fragments: placeholders are found outside literals", "[sql]") {
    CHECK(placeholders_of("status = :status, updated_time = NOW(3)") == Names{"status"});
    CHECK(placeholders_of("a = :x, b = :y, c = :x") == Names{"x", "y"});
    CHECK(placeholders_of("a = :_v1+:W") == Names{"_v1", "W"});
    CHECK(placeholders_of("t = '12:30' AND u = \"a:b\" AND `c:d` = 1") == Names{});
    CHECK(placeholders_of("@n := 1") == Names{});
    CHECK(placeholders_of("a = b::c") == Names{});
    CHECK(placeholders_of("a = :1 AND b = ':x' AND c = :y") == Names{"y"});
    CHECK(placeholders_of("a = :x AND t = 'it''s :not' AND b = :z") == Names{"x", "z"});
}

TEST_CASE("find_placeholders reports byte ranges", "[sql]") {
    auto spans = detail::find_placeholders("a = :x + :yy, s = ':q'");
    REQUIRE(spans.size() == 2);
    CHECK(spans[0].begin == 4);
    CHECK(spans[0].end == 6);
    CHECK(spans[0].name == "x");
    CHECK(spans[1].begin == 9);
    CHECK(spans[1].end == 12);
    CHECK(spans[1].name == "yy");
}

TEST_CASE("substitute_placeholders replaces every occurrence", "[sql]") {
    std::string error;
    auto fragment = parse_fragment("a = :x, b = 'keep :x', c = :y, d = :x", error);
    REQUIRE(fragment);
    CHECK(substitute_placeholders(*fragment, [](const std::string&) { return "?"; }) ==
          "a = ?, b = 'keep :x', c = ?, d = ?");
    CHECK(substitute_placeholders(*fragment, [](const std::string& name) {
              return "@v_" + name;
          }) == "a = @v_x, b = 'keep :x', c = @v_y, d = @v_x");

    auto plain = parse_fragment("status = 3", error);
    REQUIRE(plain);
    CHECK(substitute_placeholders(*plain, [](const std::string&) { return "?"; }) == "status = 3");

    auto edge = parse_fragment(":a", error);
    REQUIRE(edge);
    CHECK(substitute_placeholders(*edge, [](const std::string&) { return "?"; }) == "?");
}

TEST_CASE("fragments: parentheses must balance so the fragment stays in its place", "[sql]") {
    // Found by a config fuzz: this closed the claim's "(due)" and turned off its lease and
    // dead checks.
    CHECK(fragment_error("done = 0) OR (1=1") ==
          "has a ')' at column 9 that closes no '(' of its own (a fragment must be one balanced "
          "expression)");
    CHECK(fragment_error("(a = 1))") ==
          "has a ')' at column 8 that closes no '(' of its own (a fragment must be one balanced "
          "expression)");
    CHECK(fragment_error("status = 1, n = (n + 1") ==
          "has 1 unclosed '(' (a fragment must be one balanced expression)");
    CHECK(fragment_error("((a = 1") ==
          "has 2 unclosed '(' (a fragment must be one balanced expression)");
    CHECK(fragment_error(") OR (") ==
          "has a ')' at column 1 that closes no '(' of its own (a fragment must be one balanced "
          "expression)");
    // Parentheses inside literals and quoted identifiers do not count.
    CHECK(fragment_error("note = ')' AND x = \"(\" AND `(a` = 1 AND ((b = 2))") == "");
    CHECK(fragment_error("updated_time < NOW(3) - INTERVAL 10 SECOND") == "");
}

TEST_CASE("fragments: no subquery, set operation or INTO", "[sql]") {
    const std::string rule =
        " (a fragment must be one expression of its statement: no subquery, UNION or INTO)";
    CHECK(fragment_error("id IN (SELECT id FROM admins)") == "contains SELECT" + rule);
    CHECK(fragment_error("a = 1 AND EXISTS (select 1 from mysql.user)") ==
          "contains SELECT" + rule);
    CHECK(fragment_error("id IN (1) UNION (2)") == "contains UNION" + rule);
    CHECK(fragment_error("a = 1 INTO @x") == "contains INTO" + rule);
    CHECK(fragment_error("a = 1 Intersect b") == "contains INTERSECT" + rule);
    CHECK(fragment_error("a = 1 except b") == "contains EXCEPT" + rule);
    // Only whole words outside literals and quoted identifiers.
    CHECK(fragment_error("selection = 1 AND union_id = 2 AND intox = 3 AND @select = 4") == "");
    CHECK(fragment_error("note = 'select * into outfile' AND `union` = 1") == "");
}

TEST_CASE("fragments: no lock functions on the leader's session", "[sql]") {
    CHECK(fragment_error("RELEASE_ALL_LOCKS() >= 0 AND status = 0") ==
          "calls RELEASE_ALL_LOCKS(), which acts on the dispatcher's session and its leader lock");
    CHECK(fragment_error("get_lock ('x', 0) = 1") ==
          "calls GET_LOCK(), which acts on the dispatcher's session and its leader lock");
    CHECK(fragment_error("release_lock('rowpump') IS NULL") ==
          "calls RELEASE_LOCK(), which acts on the dispatcher's session and its leader lock");
    CHECK(fragment_error("get_lock = 1 AND note = 'GET_LOCK(1)'") == "");  // a column named so
}
