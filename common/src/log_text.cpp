#include "rowpump/common/log_text.hpp"

#include <algorithm>

#include "rowpump/common/utf8.hpp"

namespace rowpump {

namespace {

void append_hex_escape(std::string& out, unsigned char c) {
    static const char* const kHex = "0123456789ABCDEF";
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
}

// The escaped form of the character (or stray byte) at text[i]; `length` receives how many
// bytes of `text` it covers.
std::string escaped_at(std::string_view text, std::size_t i, std::size_t& length) {
    const auto c = static_cast<unsigned char>(text[i]);
    length = utf8_sequence_length(text, i);
    std::string out;
    if (c == '\\') return "\\\\";
    if (c == '\n') return "\\n";
    if (c == '\r') return "\\r";
    if (c == '\t') return "\\t";
    const bool c0_or_del = c < 0x20 || c == 0x7F;
    // C1 controls (U+0080..U+009F) are C2 80..C2 9F; some terminals act on them.
    const bool c1 = length == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;
    if (length == 0 || c0_or_del || c1) {
        if (length == 0) length = 1;
        for (std::size_t k = 0; k < length; ++k) {
            append_hex_escape(out, static_cast<unsigned char>(text[i + k]));
        }
        return out;
    }
    return std::string(text.substr(i, length));
}

}  // namespace

std::string log_text(std::string_view text, std::size_t max_bytes) {
    std::string out;
    out.reserve(std::min(text.size(), max_bytes) + 16);
    for (std::size_t i = 0; i < text.size();) {
        std::size_t length = 0;
        auto piece = escaped_at(text, i, length);
        if (out.size() + piece.size() > max_bytes) {
            return out + "... (" + std::to_string(text.size()) + " bytes)";
        }
        out += piece;
        i += length;
    }
    return out;
}

}  // namespace rowpump
