#include "rowpump/common/protocol/key_gauges.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "rowpump/common/protocol/keys.hpp"

namespace rowpump::protocol {

namespace {

constexpr const char* kKeyPrefix = "key:";
constexpr std::size_t kScanCount = 100;

std::optional<std::int64_t> to_int(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0' || value < 0) return std::nullopt;
    return value;
}

std::string figure_text(const KeyFigure& f) {
    std::string text = "pushed=" + std::to_string(f.pushed) +
                       " recent=" + std::to_string(f.recent) +
                       " passed_over=" + std::to_string(f.passed_over);
    if (f.in_flight) text += " in_flight=" + std::to_string(*f.in_flight);
    return text;
}

// "pushed=N recent=N passed_over=N[ in_flight=N]"; names it does not know are left alone.
std::optional<KeyFigure> parse_figure(const std::string& text) {
    KeyFigure f;
    std::istringstream words(text);
    bool any = false;
    for (std::string word; words >> word;) {
        const auto eq = word.find('=');
        if (eq == std::string::npos) return std::nullopt;
        const auto value = to_int(word.substr(eq + 1));
        if (!value) return std::nullopt;
        const auto name = word.substr(0, eq);
        if (name == "pushed") f.pushed = *value, any = true;
        if (name == "recent") f.recent = *value;
        if (name == "passed_over") f.passed_over = *value;
        if (name == "in_flight") f.in_flight = *value;
    }
    if (!any) return std::nullopt;
    return f;
}

std::string cut(std::string text, std::size_t bytes) {
    if (text.size() > bytes) text.resize(bytes);
    return text;
}

}  // namespace

bool ranks_before(const KeyFigure& a, const KeyFigure& b) {
    const auto in_flight = [](const KeyFigure& f) { return f.in_flight.value_or(0); };
    if (in_flight(a) != in_flight(b)) return in_flight(a) > in_flight(b);
    if (a.recent != b.recent) return a.recent > b.recent;
    if (a.pushed != b.pushed) return a.pushed > b.pushed;
    if (a.passed_over != b.passed_over) return a.passed_over > b.passed_over;
    return a.key < b.key;  // NULL first, then in byte order
}

std::vector<std::string> key_gauge_fields(const KeyGauges& g) {
    std::vector<std::string> out{
        "leader", g.leader, "at_ms", std::to_string(g.at_ms), "other", figure_text(g.other)};
    for (const auto& f : g.top) {
        out.push_back(f.key ? kKeyPrefix + *f.key : std::string("null"));
        out.push_back(figure_text(f));
    }
    return out;
}

std::optional<KeyGauges> parse_key_gauges(const std::vector<std::string>& fields) {
    if (fields.empty()) return std::nullopt;
    KeyGauges g;
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
        const auto& name = fields[i];
        const auto& value = fields[i + 1];
        if (name == "leader") g.leader = value;
        if (name == "at_ms") g.at_ms = to_int(value).value_or(0);
        const bool is_key = name.rfind(kKeyPrefix, 0) == 0;
        if (!is_key && name != "null" && name != "other") continue;
        auto figure = parse_figure(value);
        if (!figure) continue;
        if (name == "other") {
            g.other = *figure;
            continue;
        }
        if (is_key) figure->key = cut(name.substr(std::string(kKeyPrefix).size()), kKeyBytes);
        g.top.push_back(std::move(*figure));
    }
    std::sort(g.top.begin(), g.top.end(), ranks_before);
    if (g.top.size() > kTopKeys) g.top.resize(kTopKeys);
    return g;
}

BoundedHash read_hash_bounded(redis::Connection& redis, const std::string& key,
                              std::size_t max_fields) {
    BoundedHash out;
    out.total = redis.command({"HLEN", key}).integer();
    if (out.total == 0) return out;
    // HSCAN may return a field twice (while the hash grows); the map keeps it once, in order.
    std::map<std::string, std::string> seen;
    std::string cursor = "0";
    // A guard on the round trips as well: each returns about kScanCount fields.
    for (std::size_t round = 0; round < max_fields / kScanCount + 10; ++round) {
        const auto reply =
            redis.command({"HSCAN", key, cursor, "COUNT", std::to_string(kScanCount)}).value();
        if (reply.elements.size() != 2) break;
        cursor = reply.elements[0].text;
        const auto& pairs = reply.elements[1].elements;
        for (std::size_t i = 0; i + 1 < pairs.size() && seen.size() < max_fields; i += 2)
            seen.emplace(pairs[i].text, pairs[i + 1].text);
        if (cursor == "0" || seen.size() >= max_fields) break;
    }
    out.fields.assign(seen.begin(), seen.end());
    return out;
}

KeyLimits read_key_limits(redis::Connection& redis, const std::string& queue) {
    const auto hash = read_hash_bounded(redis, keys_for(queue).key_limits, kKeyLimitsShown);
    KeyLimits out;
    out.total = hash.total;
    for (const auto& [field, value] : hash.fields)
        out.shown.push_back({cut(field, kKeyBytes), cut(value, kLimitsBytes)});
    return out;
}

std::optional<KeyGauges> read_key_gauges(redis::Connection& redis, const std::string& queue) {
    // The leader writes kTopKeys keys and 3 more fields; a few over that are read all the same.
    const auto hash = read_hash_bounded(redis, keys_for(queue).key_gauges, 2 * kTopKeys + 10);
    std::vector<std::string> fields;
    for (const auto& [field, value] : hash.fields) {
        fields.push_back(field);
        fields.push_back(value);
    }
    return parse_key_gauges(fields);
}

}  // namespace rowpump::protocol
