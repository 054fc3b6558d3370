#include "rowpump/dispatcher/loop/key_limits.hpp"

#include <algorithm>

#include "rowpump/common/duration.hpp"
#include "rowpump/common/log_text.hpp"
#include "rowpump/dispatcher/config/config_error.hpp"

namespace rowpump {

namespace {

bool is_digits(std::string_view text) {
    return !text.empty() && text.size() <= 10 &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A whole number in [1, most]; nullopt otherwise.
std::optional<std::int64_t> bounded_number(std::string_view text, std::int64_t most) {
    if (!is_digits(text)) return std::nullopt;
    const auto n = std::stoll(std::string(text));
    if (n < 1 || n > most) return std::nullopt;
    return n;
}

}  // namespace

std::optional<KeyLimit> parse_key_limit(std::string_view text, std::string& error) {
    if (text.size() > kMaxLimitValueBytes) {
        error = "longer than " + std::to_string(kMaxLimitValueBytes) + " bytes";
        return std::nullopt;
    }
    KeyLimit limit;
    bool any = false;
    std::size_t at = 0;
    while (at < text.size()) {
        if (text[at] == ' ') {
            ++at;
            continue;
        }
        const auto end = std::min(text.find(' ', at), text.size());
        const auto part = text.substr(at, end - at);
        at = end;
        const auto eq = part.find('=');
        const auto name = part.substr(0, eq == std::string_view::npos ? part.size() : eq);
        const auto value = eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1);
        const auto shown = "'" + log_text(part, 80) + "'";
        if (eq == std::string_view::npos) {
            error = shown + " is not name=value (rate=N/period, concurrency=N or weight=N)";
            return std::nullopt;
        }
        if (name == "rate") {
            auto rate = parse_rate(value);
            if (limit.rate || !rate || rate->count < 1 || rate->count > kMaxKeyLimitNumber ||
                rate->per.count() <= 0 || rate->per > kMaxDuration) {
                error = limit.rate ? "rate given twice"
                                   : shown + ": a rate is N/period, N from 1 to " +
                                         std::to_string(kMaxKeyLimitNumber) +
                                         ", period from 1ms to 365 days (100/1s, 1/3s)";
                return std::nullopt;
            }
            limit.rate = rate;
        } else if (name == "concurrency" || name == "weight") {
            auto& slot = name == "weight" ? limit.weight : limit.concurrency;
            const auto most = name == "weight" ? kMaxKeyWeight : kMaxKeyLimitNumber;
            auto n = bounded_number(value, most);
            if (slot || !n) {
                error = slot ? std::string(name) + " given twice"
                             : shown + ": " + std::string(name) + " is a whole number from 1 to " +
                                   std::to_string(most);
                return std::nullopt;
            }
            slot = n;
        } else {
            error = "unknown limit " + shown + " (rate, concurrency or weight)";
            return std::nullopt;
        }
        any = true;
    }
    if (!any) {
        error = "names no limit (rate=N/period, concurrency=N or weight=N)";
        return std::nullopt;
    }
    return limit;
}

std::string format_key_limit(const KeyLimit& limit) {
    std::string text;
    const auto add = [&text](const std::string& part) {
        if (!text.empty()) text += ' ';
        text += part;
    };
    if (limit.rate) {
        add("rate=" + std::to_string(limit.rate->count) + "/" + format_duration(limit.rate->per));
    }
    if (limit.concurrency) add("concurrency=" + std::to_string(*limit.concurrency));
    if (limit.weight) add("weight=" + std::to_string(*limit.weight));
    return text;
}

std::string check_limit_key(std::string_view key) {
    if (key.empty()) return "a key is 1 to 255 bytes, got an empty one";
    if (key.size() > kMaxLimitKeyBytes) {
        return "a key is 1 to 255 bytes, got " + std::to_string(key.size());
    }
    return "";
}

std::string key_rate_field(const GroupKey& key) {
    return key ? "=" + *key : "null";
}

KeyLimits::KeyLimits(const QueueConfig& queue)
    : queue_rate_(queue.rate_per_key),
      queue_concurrency_(queue.concurrency_per_key),
      shards_(!queue.shards.empty()) {}

std::vector<std::string> KeyLimits::load(
    const std::vector<std::pair<std::string, std::string>>& fields) {
    std::vector<std::string> refused;
    if (fields.size() > kMaxKeyLimitOverrides) {
        refused.push_back("holds " + std::to_string(fields.size()) + " keys, more than " +
                          std::to_string(kMaxKeyLimitOverrides) +
                          ": every key keeps the limits it had");
        return refused;
    }
    std::map<std::string, KeyLimit, std::less<>> overrides;
    std::size_t rates = 0, concurrencies = 0;
    for (const auto& [key, value] : fields) {
        std::string error = check_limit_key(key);
        std::optional<KeyLimit> limit;
        if (error.empty()) limit = parse_key_limit(value, error);
        if (limit && limit->concurrency && shards_) {
            limit.reset();
            error = "concurrency does not work with shards yet";
        }
        if (!limit) {
            refused.push_back("key '" + log_text(key, 80) + "' (value '" + log_text(value, 80) +
                              "'): " + error + "; it keeps the queue's limits");
            continue;
        }
        rates += limit->rate ? 1 : 0;
        concurrencies += limit->concurrency ? 1 : 0;
        overrides.emplace(key, *limit);
    }
    overrides_ = std::move(overrides);
    rate_overrides_ = rates;
    concurrency_overrides_ = concurrencies;
    return refused;
}

const KeyLimit* KeyLimits::find(const GroupKey& key) const {
    if (!key || overrides_.empty()) return nullptr;
    auto it = overrides_.find(*key);
    return it == overrides_.end() ? nullptr : &it->second;
}

std::optional<Rate> KeyLimits::rate(const GroupKey& key) const {
    const auto* limit = find(key);
    return limit && limit->rate ? limit->rate : queue_rate_;
}

std::int64_t KeyLimits::concurrency(const GroupKey& key) const {
    const auto* limit = find(key);
    return limit && limit->concurrency ? *limit->concurrency : queue_concurrency_;
}

std::int64_t KeyLimits::weight(const GroupKey& key) const {
    const auto* limit = find(key);
    return limit && limit->weight ? *limit->weight : 1;
}

}  // namespace rowpump
