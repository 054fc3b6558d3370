#pragma once

// A Lua script as Redis runs it: its text and the SHA1 Redis names it by (computed at build time,
// see cmake/EmbedLua.cmake), run with EVALSHA so the text travels only when Redis lacks it. The
// protocol's scripts are common/lua/*.lua (protocol/scripts.hpp).

#include <string>
#include <string_view>
#include <vector>

#include "rowpump/common/redis/redis.hpp"

namespace rowpump::redis {

class Script {
public:
    constexpr Script(std::string_view text, std::string_view sha1) : text_(text), sha1_(sha1) {}

    std::string_view text() const { return text_; }
    std::string_view sha1() const { return sha1_; }

    // EVALSHA, and after a NOSCRIPT reply (Redis lost its script cache: a restart, a failover,
    // SCRIPT FLUSH) EVAL once, which caches the script again. Throws what Connection::command
    // throws.
    Reply eval(Connection& connection, const std::vector<std::string>& keys,
               const std::vector<std::string>& args) const;
    // The EVALSHA command, for a pipeline; on a NOSCRIPT reply (is_noscript) run eval().
    std::vector<std::string> evalsha(const std::vector<std::string>& keys,
                                     const std::vector<std::string>& args) const;
    // Whether a reply error says that Redis does not know the script.
    static bool is_noscript(const ReplyError& error);

    // SCRIPT LOAD of each script in one round trip, so the first EVALSHAs find them. Throws
    // ReplyError if Redis names one by another SHA1 than ours.
    static void load(Connection& connection, const std::vector<const Script*>& scripts);

private:
    std::vector<std::string> call(const char* verb, std::string_view script,
                                  const std::vector<std::string>& keys,
                                  const std::vector<std::string>& args) const;

    std::string_view text_;
    std::string_view sha1_;
};

}  // namespace rowpump::redis
