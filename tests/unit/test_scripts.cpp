// Workers written without the SDK run copies of the protocol's scripts: the redis-cli worker
// the end-to-end tests drive, and the README's Protocol section. They must say what
// common/src/protocol/scripts.cpp says.

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "rowpump/common/protocol/scripts.hpp"

namespace {

std::string read_source(const std::string& path) {
    std::ifstream in(std::string(ROWPUMP_SOURCE_DIR) + "/" + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Lua does not care how statements are spread over lines: compare the words.
std::string normalised(const std::string& lua) {
    std::istringstream in(lua);
    std::string word, out;
    while (in >> word) out += (out.empty() ? "" : " ") + word;
    return out;
}

// The text between the first `opening` and the next double quote; "" when not found.
std::string quoted_after(const std::string& text, const std::string& opening) {
    const auto start = text.find(opening);
    if (start == std::string::npos) return "";
    const auto begin = start + opening.size();
    const auto end = text.find('"', begin);
    return end == std::string::npos ? "" : text.substr(begin, end - begin);
}

}  // namespace

TEST_CASE("the redis-cli worker runs the protocol's complete script", "[scripts]") {
    const auto copy =
        quoted_after(read_source("tests/integration/redis_cli_worker.sh"), "complete_script=\"");
    REQUIRE(!copy.empty());
    CHECK(normalised(copy) == normalised(rowpump::protocol::kCompleteScript));
}

TEST_CASE("the README quotes the protocol's complete script", "[scripts]") {
    const auto readme = read_source("README.md");
    const auto protocol = readme.find("## Protocol");
    REQUIRE(protocol != std::string::npos);
    const auto copy = quoted_after(readme.substr(protocol), "EVAL \"");
    REQUIRE(!copy.empty());
    CHECK(normalised(copy) == normalised(rowpump::protocol::kCompleteScript));
}
