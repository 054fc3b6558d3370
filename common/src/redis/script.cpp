#include "rowpump/common/redis/script.hpp"

namespace rowpump::redis {

std::vector<std::string> Script::call(const char* verb, std::string_view script,
                                      const std::vector<std::string>& keys,
                                      const std::vector<std::string>& args) const {
    std::vector<std::string> argv{verb, std::string(script), std::to_string(keys.size())};
    argv.reserve(argv.size() + keys.size() + args.size());
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

std::vector<std::string> Script::evalsha(const std::vector<std::string>& keys,
                                         const std::vector<std::string>& args) const {
    return call("EVALSHA", sha1_, keys, args);
}

Reply Script::eval(Connection& connection, const std::vector<std::string>& keys,
                   const std::vector<std::string>& args) const {
    try {
        return connection.command(evalsha(keys, args));
    } catch (const ReplyError& e) {
        if (!is_noscript(e)) throw;
    }
    return connection.command(call("EVAL", text_, keys, args));
}

bool Script::is_noscript(const ReplyError& error) {
    return std::string_view(error.what()).rfind("NOSCRIPT", 0) == 0;
}

void Script::load(Connection& connection, const std::vector<const Script*>& scripts) {
    for (const auto* script : scripts) {
        connection.append({"SCRIPT", "LOAD", std::string(script->text_)});
    }
    const auto replies = connection.read_replies(scripts.size());
    for (std::size_t i = 0; i < scripts.size(); ++i) {
        const auto sha1 = replies[i].string();
        if (sha1 != scripts[i]->sha1_) {
            throw ReplyError("Redis names a script " + sha1 + ", not " +
                             std::string(scripts[i]->sha1_));
        }
    }
}

}  // namespace rowpump::redis
