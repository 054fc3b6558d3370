// Workers written without the C++ SDK run copies of the protocol's scripts: the Python and
// Node.js packages (byte for byte), the redis-cli worker the end-to-end tests drive, and
// docs/protocol.md. They must say what common/lua/ says; and what the SDK compiles in is that.

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

// The script without its header comment (the lines before the code, each starting "--").
std::string code_of(const std::string& lua) {
    std::istringstream in(lua);
    std::string line, code;
    bool header = true;
    while (std::getline(in, line)) {
        if (header && line.rfind("--", 0) == 0) continue;
        header = false;
        code += line + "\n";
    }
    return code;
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

const std::string kComplete = code_of(read_source("common/lua/complete.lua"));

}  // namespace

TEST_CASE("the compiled-in scripts are the files of common/lua", "[scripts]") {
    CHECK(std::string(rowpump::protocol::kCompleteScript.text()) ==
          read_source("common/lua/complete.lua"));
    CHECK(std::string(rowpump::protocol::kPushScript.text()) == read_source("common/lua/push.lua"));
    CHECK(rowpump::protocol::kCompleteScript.sha1().size() == 40);
    CHECK(kComplete.find("local accepted = 0") == 0);
}

TEST_CASE("the redis-cli worker runs the protocol's complete script", "[scripts]") {
    const auto copy =
        quoted_after(read_source("tests/integration/redis_cli_worker.sh"), "complete_script=\"");
    REQUIRE(!copy.empty());
    CHECK(normalised(copy) == normalised(kComplete));
}

TEST_CASE("the redis-cli worker runs the protocol's beat and leave scripts", "[scripts]") {
    const auto worker = read_source("tests/integration/redis_cli_worker.sh");
    for (const std::string name : {"beat", "leave"}) {
        INFO(name);
        const auto copy = quoted_after(worker, name + "_script=\"");
        REQUIRE(!copy.empty());
        CHECK(normalised(copy) == normalised(code_of(read_source("common/lua/" + name + ".lua"))));
    }
}

TEST_CASE("the complete script docs/protocol.md quotes is the protocol's", "[scripts]") {
    const auto copy = quoted_after(read_source("docs/protocol.md"), "EVAL \"");
    REQUIRE(!copy.empty());
    CHECK(normalised(copy) == normalised(kComplete));
}

TEST_CASE("the Python and Node.js packages ship the protocol's worker scripts as they are",
          "[scripts]") {
    for (const std::string dir :
         {"worker-sdk/python/rowpump/protocol/lua", "worker-sdk/node/lua"}) {
        for (const std::string name : {"beat", "complete", "give_back", "leave", "take"}) {
            INFO(dir << "/" << name << ".lua");
            const auto copy = read_source(dir + "/" + name + ".lua");
            REQUIRE(!copy.empty());
            CHECK(copy == read_source("common/lua/" + name + ".lua"));
        }
    }
}
