#include <catch2/catch.hpp>

#include <string>

#include "rowpump/common/log_text.hpp"
#include "rowpump/common/protocol/report_rules.hpp"
#include "rowpump/common/utf8.hpp"

using namespace rowpump;

namespace {

bool has_control_byte(const std::string& text) {
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7F) return true;
    }
    return false;
}

}  // namespace

TEST_CASE("valid UTF-8 passes unchanged and anything else becomes U+FFFD", "[utf8]") {
    const std::string ok = "plain, caf\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80";
    CHECK(valid_utf8(ok) == ok);
    CHECK(valid_utf8("a\xFF"
                     "b") ==
          "a\xEF\xBF\xBD"
          "b");
    CHECK(valid_utf8("\xC3") == "\xEF\xBF\xBD");                                  // cut short
    CHECK(valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
    CHECK(valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
    CHECK(valid_utf8("\xF4\x90\x80\x80").size() == 12);                           // past U+10FFFF
    CHECK(valid_utf8(std::string("\0x", 2)) == std::string("\0x", 2));
}

TEST_CASE("a reason is stored as valid UTF-8 within the column", "[utf8]") {
    CHECK(protocol::clip_reason("bad \xFE\xFF bytes") == "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
    const auto clipped = protocol::clip_reason(std::string(2000, '\xFF'));
    CHECK(clipped.size() <= protocol::kMaxReasonBytes);
    CHECK(valid_utf8(clipped) == clipped);
}

TEST_CASE("log text cannot start a line or carry control bytes", "[log]") {
    CHECK(log_text("plain text") == "plain text");
    CHECK(log_text("a\nb\r\tc\\d") == "a\\nb\\r\\tc\\\\d");
    CHECK(log_text("esc\x1B[31m red") == "esc\\x1B[31m red");
    CHECK(log_text("nul" + std::string(1, '\0')) == "nul\\x00");
    CHECK(log_text("\x7F") == "\\x7F");
    CHECK(log_text("c1 \xC2\x85") == "c1 \\xC2\\x85");  // NEL
    CHECK(log_text("caf\xC3\xA9 \xFF") == "caf\xC3\xA9 \\xFF");
    const std::string forged =
        "x ok\n[2024-01-01 00:00:00.000] [info] queue q: took the leader lock";
    CHECK(log_text(forged).find('\n') == std::string::npos);
}

TEST_CASE("long log text is clipped with its length", "[log]") {
    const std::string big(3 * 1024 * 1024, 'x');
    const auto text = log_text(big);
    CHECK(text == std::string(kLogTextBytes, 'x') + "... (3145728 bytes)");
    // Escapes are never cut in half: 67 escapes of 4 bytes fill 268 bytes, 50 fit in 200.
    const auto escaped = log_text(std::string(67, '\x01'));
    CHECK(escaped.rfind("... (67 bytes)") == 200);
    CHECK(!has_control_byte(escaped));
    CHECK(log_text("abcdef", 3) == "abc... (6 bytes)");
    CHECK(log_text(std::string(kLogTextBytes, 'y')) == std::string(kLogTextBytes, 'y'));
}
