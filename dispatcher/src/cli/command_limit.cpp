// rowpump limit set|unset|list: the per-key limits of a queue with group_by, in the Redis hash
// rowpump:{<queue>}:key_limits that the leading dispatcher reads every few seconds
// (docs/fairness.md, loop/key_limits.hpp).

#include <algorithm>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli/queue_argument.hpp"
#include "rowpump/common/log_text.hpp"
#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/protocol/scripts.hpp"
#include "rowpump/dispatcher/cli/commands.hpp"
#include "rowpump/dispatcher/loop/key_limits.hpp"

namespace rowpump {

namespace {

// "rate 100/1s concurrency 5" as the hash's value form, checked; nullopt after telling `err`.
std::optional<KeyLimit> limit_from_words(const std::vector<std::string>& words, bool shards,
                                         std::ostream& err) {
    if (words.empty() || words.size() % 2 != 0) {
        err << "give limits as pairs: rate N/period, concurrency N, weight N (any of them)\n";
        return std::nullopt;
    }
    std::string text;
    for (std::size_t i = 0; i < words.size(); i += 2) {
        if (words[i + 1].find_first_of(" =") != std::string::npos ||
            words[i].find_first_of(" =") != std::string::npos) {
            err << "'" << log_text(words[i] + " " + words[i + 1], 80)
                << "': a limit is a name and a value (rate 100/1s)\n";
            return std::nullopt;
        }
        text += (text.empty() ? "" : " ") + words[i] + "=" + words[i + 1];
    }
    std::string error;
    auto limit = parse_key_limit(text, error);
    if (!limit) {
        err << error << "\n";
        return std::nullopt;
    }
    if (shards && limit->concurrency) {
        err << "concurrency does not work with shards yet: each shard's leader would count "
               "alone\n";
        return std::nullopt;
    }
    return limit;
}

// The key_limits hash, bounded in Redis (common/lua/key_limits.lua): (field, value) pairs.
std::vector<std::pair<std::string, std::string>> read_limits(redis::Connection& redis,
                                                             const protocol::Keys& keys) {
    // Loaded first: a user of the documented ACL runs scripts by SHA1 and may not EVAL.
    redis::Script::load(redis, {&protocol::kKeyLimitsScript});
    const auto flat =
        protocol::kKeyLimitsScript
            .eval(redis, {keys.key_limits},
                  {std::to_string(kMaxKeyLimitOverrides), std::to_string(kMaxLimitValueBytes + 1)})
            .strings();
    if (flat.size() % 2 == 1) {
        throw std::runtime_error(keys.key_limits + " holds " + flat[0] + " keys, more than " +
                                 std::to_string(kMaxKeyLimitOverrides));
    }
    std::vector<std::pair<std::string, std::string>> fields;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) fields.emplace_back(flat[i], flat[i + 1]);
    std::sort(fields.begin(), fields.end());
    return fields;
}

}  // namespace

int command_limit(const Config& config, const LimitCommand& command, std::ostream& out,
                  std::ostream& err) {
    const auto* queue = find_queue_or_complain(config, command.queue, err);
    if (queue == nullptr) return 1;
    if (queue->group_by.empty()) {
        err << "queue '" << queue->name
            << "' has no group_by: per-key limits need the column that names a row's key\n";
        return 1;
    }
    std::optional<KeyLimit> limit;
    if (command.action != LimitCommand::Action::list) {
        if (const auto why = check_limit_key(command.key); !why.empty()) {
            err << why << "\n";
            return kUsageError;
        }
    }
    if (command.action == LimitCommand::Action::set) {
        limit = limit_from_words(command.limits, !queue->shards.empty(), err);
        if (!limit) return kUsageError;
    }
    const auto keys = protocol::keys_for(queue->name);
    const std::string shown = "'" + log_text(command.key, 80) + "'";
    try {
        auto redis = redis::Connection::connect_for(config.redis, keys.prefix);
        switch (command.action) {
            case LimitCommand::Action::list: {
                const auto fields = read_limits(redis, keys);
                for (const auto& [key, value] : fields) {
                    std::string error = check_limit_key(key);
                    if (error.empty()) parse_key_limit(value, error);
                    out << log_text(key) << "\t" << log_text(value)
                        << (error.empty() ? "" : "\t(refused: " + error + ")") << "\n";
                }
                if (fields.empty()) out << "queue " << queue->name << ": no per-key limits\n";
                return 0;
            }
            case LimitCommand::Action::unset: {
                const bool removed =
                    redis.command({"HDEL", keys.key_limits, command.key}).integer() == 1;
                out << "queue " << queue->name << ": key " << shown
                    << (removed ? ": back to the queue's limits" : ": had no limits of its own")
                    << "\n";
                return 0;
            }
            case LimitCommand::Action::set: {
                // Merged with what the key had: the limits named replace theirs, the others
                // stay (a value that does not parse is replaced whole).
                const auto had = redis.command({"HGET", keys.key_limits, command.key});
                if (had.is_nil()) {
                    if (redis.command({"HLEN", keys.key_limits}).integer() >=
                        static_cast<std::int64_t>(kMaxKeyLimitOverrides)) {
                        err << keys.key_limits << " holds " << kMaxKeyLimitOverrides
                            << " keys already, the most a queue may have\n";
                        return 1;
                    }
                } else {
                    std::string ignored;
                    if (auto old = parse_key_limit(had.string(), ignored)) {
                        if (!limit->rate) limit->rate = old->rate;
                        if (!limit->concurrency) limit->concurrency = old->concurrency;
                        if (!limit->weight) limit->weight = old->weight;
                    }
                }
                const auto value = format_key_limit(*limit);
                redis.command({"HSET", keys.key_limits, command.key, value});
                out << "queue " << queue->name << ": key " << shown << ": " << value
                    << " (the leading dispatcher applies it within a few seconds)\n";
                return 0;
            }
        }
    } catch (const std::exception& e) {
        err << "redis: " << e.what() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace rowpump
